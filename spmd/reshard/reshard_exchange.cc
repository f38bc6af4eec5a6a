#include "spmd/reshard/reshard_exchange.h"

#include <algorithm>
#include <numeric>

#include "hlo/status_macros.h"
#include "hlo/strings.h"

namespace spmd {
namespace {

constexpr int64_t kMaxExchangeWork = int64_t{1} << 16;

// Row-major linear index of `index` in a grid of `dims`.
int64_t Linear(absl::Span<const int64_t> index, absl::Span<const int64_t> dims) {
  int64_t linear = 0;
  for (size_t d = 0; d < dims.size(); ++d) linear = linear * dims[d] + index[d];
  return linear;
}

// All multi-indices of a grid of `dims`, row-major.
std::vector<std::vector<int64_t>> GridPositions(const std::vector<int64_t>& dims) {
  std::vector<std::vector<int64_t>> out;
  std::vector<int64_t> index(dims.size(), 0);
  const int64_t total =
      std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<int64_t>());
  for (int64_t i = 0; i < total; ++i) {
    out.push_back(index);
    for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

struct Transfer {
  int64_t source, target;
  std::vector<int64_t> read, write;
};

// Proper edge coloring of a bipartite multigraph (senders | receivers) with max-degree colors:
// each edge takes a color free at both ends, after swapping the two colors along the
// alternating path from the receiver when needed (König). Returns a color per edge.
std::vector<int64_t> ColorEdges(const std::vector<Transfer>& edges, int64_t n, int64_t colors) {
  // at[side][device][color] = edge index or -1; side 0 senders, 1 receivers.
  std::vector<std::vector<std::vector<int64_t>>> at(
      2, std::vector<std::vector<int64_t>>(n, std::vector<int64_t>(colors, -1)));
  std::vector<int64_t> color(edges.size(), -1);
  auto free_color = [&](int side, int64_t v) {
    for (int64_t c = 0; c < colors; ++c) {
      if (at[side][v][c] < 0) return c;
    }
    return int64_t{-1};
  };
  for (size_t e = 0; e < edges.size(); ++e) {
    const int64_t u = edges[e].source, v = edges[e].target;
    const int64_t a = free_color(0, u), b = free_color(1, v);
    if (at[1][v][a] >= 0) {
      // Swap colors a and b along the path from v that starts with its a-edge.
      std::vector<int64_t> path;
      int side = 1;
      int64_t node = v, want = a;
      while (at[side][node][want] >= 0) {
        const int64_t edge = at[side][node][want];
        path.push_back(edge);
        node = side == 1 ? edges[edge].source : edges[edge].target;
        side = 1 - side;
        want = want == a ? b : a;
      }
      for (int64_t edge : path) {
        at[0][edges[edge].source][color[edge]] = -1;
        at[1][edges[edge].target][color[edge]] = -1;
      }
      for (int64_t edge : path) {
        color[edge] = color[edge] == a ? b : a;
        at[0][edges[edge].source][color[edge]] = edge;
        at[1][edges[edge].target][color[edge]] = edge;
      }
    }
    color[e] = a;
    at[0][u][a] = static_cast<int64_t>(e);
    at[1][v][a] = static_cast<int64_t>(e);
  }
  return color;
}

ExchangeRound EmptyRound(int64_t n, int64_t rank) {
  return {{},
          std::vector<std::vector<int64_t>>(n, std::vector<int64_t>(rank, 0)),
          std::vector<std::vector<int64_t>>(n, std::vector<int64_t>(rank, 0)),
          std::vector<bool>(n, false)};
}

// The cell grid of an exchange: cell sizes, and cells per old and per new tile, per dim.
struct CellGrid {
  std::vector<int64_t> cell_dims, new_shard_dims, per_from, per_to;
};

absl::StatusOr<CellGrid> MakeCellGrid(const TileState& from, const TileState& to,
                                      absl::Span<const int64_t> shape_dims) {
  const int64_t rank = from.rank();
  CellGrid grid;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t cells = std::lcm(from.dims[d], to.dims[d]);
    if (shape_dims[d] % cells != 0) {
      return absl::FailedPreconditionError(
          hlo::StrCat("exchange: dim ", d, " of ", shape_dims[d], " is not ", cells, " cells"));
    }
    grid.cell_dims.push_back(shape_dims[d] / cells);
    grid.new_shard_dims.push_back(shape_dims[d] / to.dims[d]);
    grid.per_from.push_back(cells / from.dims[d]);
    grid.per_to.push_back(cells / to.dims[d]);
  }
  // Planning cost grows with cells x devices (and holders): large meshes with fine cell grids
  // are left to the searched path.
  int64_t positions = 1;
  for (int64_t d = 0; d < rank; ++d) positions *= grid.per_to[d];
  if (positions * from.num_devices() * from.replication() > kMaxExchangeWork) {
    return absl::FailedPreconditionError("exchange: too many cells to schedule");
  }
  return grid;
}

// Walks every cell of every device's new region (cell position `j` in the new tile, then
// device `v`), with the cell's global position; a cell the device lacks gets a sender, the
// holder with the fewest sends so far (then the lowest id), counted in `sends`. Calls
// f(v, j, global, sender), sender -1 for a cell the device already holds.
template <typename F>
void ForEachCell(const TileState& from, const TileState& to, const CellGrid& grid,
                 std::vector<int64_t>& sends, F f) {
  const int64_t rank = from.rank();
  const int64_t n = from.num_devices();
  const std::vector<int64_t> t_from = from.TileCounts();
  const std::vector<std::vector<int64_t>> tile_from = from.TileIndexByDevice();
  const std::vector<std::vector<int64_t>> tile_to = to.TileIndexByDevice();
  sends.assign(n, 0);
  std::vector<int64_t> global(rank), holder_tile(rank);
  for (const std::vector<int64_t>& j : GridPositions(grid.per_to)) {
    for (int64_t v = 0; v < n; ++v) {
      for (int64_t d = 0; d < rank; ++d) {
        global[d] = tile_to[v][d] * grid.per_to[d] + j[d];
        holder_tile[d] = global[d] / grid.per_from[d];
      }
      if (tile_from[v] == holder_tile) {
        f(v, j, global, int64_t{-1});
        continue;
      }
      absl::Span<const int64_t> holders = from.TileDevices(Linear(holder_tile, t_from));
      const int64_t source = *std::min_element(
          holders.begin(), holders.end(),
          [&](int64_t a, int64_t b) { return sends[a] != sends[b] ? sends[a] < sends[b] : a < b; });
      ++sends[source];
      f(v, j, global, source);
    }
  }
}

}  // namespace

absl::StatusOr<ExchangeSchedule> PlanExchange(const TileState& from, const TileState& to,
                                              absl::Span<const int64_t> shape_dims) {
  const int64_t rank = from.rank();
  const int64_t n = from.num_devices();
  ASSIGN_OR_RETURN(CellGrid grid, MakeCellGrid(from, to, shape_dims));
  ExchangeSchedule schedule;
  schedule.cell_dims = grid.cell_dims;
  schedule.new_shard_dims = grid.new_shard_dims;
  const std::vector<std::vector<int64_t>> tile_from = from.TileIndexByDevice();
  std::vector<int64_t> sends, received(n, 0), local(n, 0);
  std::vector<Transfer> transfers;
  auto cell = [&](int64_t v, const std::vector<int64_t>& j, const std::vector<int64_t>& global,
                  int64_t source) {
    std::vector<int64_t> write(rank), read(rank);
    const int64_t reader = source < 0 ? v : source;
    for (int64_t d = 0; d < rank; ++d) {
      write[d] = j[d] * grid.cell_dims[d];
      read[d] = (global[d] - tile_from[reader][d] * grid.per_from[d]) * grid.cell_dims[d];
    }
    if (source >= 0) {
      ++received[v];
      transfers.push_back({source, v, std::move(read), std::move(write)});
      return;
    }
    if (static_cast<int64_t>(schedule.local_rounds.size()) <= local[v]) {
      schedule.local_rounds.push_back(EmptyRound(n, rank));
    }
    ExchangeRound& round = schedule.local_rounds[local[v]++];
    round.read_offset[v] = std::move(read);
    round.write_offset[v] = std::move(write);
    round.writes[v] = true;
  };
  ForEachCell(from, to, grid, sends, cell);
  schedule.max_cells_received = *std::max_element(received.begin(), received.end());
  const int64_t colors =
      std::max(schedule.max_cells_received, *std::max_element(sends.begin(), sends.end()));
  const std::vector<int64_t> color = ColorEdges(transfers, n, colors);
  schedule.permute_rounds.assign(colors, EmptyRound(n, rank));
  for (size_t e = 0; e < transfers.size(); ++e) {
    const Transfer& t = transfers[e];
    ExchangeRound& round = schedule.permute_rounds[color[e]];
    round.pairs.push_back({t.source, t.target});
    round.read_offset[t.source] = t.read;
    round.write_offset[t.target] = t.write;
    round.writes[t.target] = true;
  }
  for (ExchangeRound& round : schedule.permute_rounds) {
    std::sort(round.pairs.begin(), round.pairs.end());
  }
  return schedule;
}

absl::StatusOr<ExchangeSize> SizeExchange(const TileState& from, const TileState& to,
                                          absl::Span<const int64_t> shape_dims) {
  ASSIGN_OR_RETURN(CellGrid grid, MakeCellGrid(from, to, shape_dims));
  std::vector<int64_t> sends, received(from.num_devices(), 0);
  ForEachCell(
      from, to, grid, sends,
      [&](int64_t v, const std::vector<int64_t>&, const std::vector<int64_t>&, int64_t source) {
        if (source >= 0) ++received[v];
      });
  ExchangeSize size;
  size.cell_dims = std::move(grid.cell_dims);
  size.max_cells_received = *std::max_element(received.begin(), received.end());
  size.rounds = std::max(size.max_cells_received, *std::max_element(sends.begin(), sends.end()));
  return size;
}

}  // namespace spmd
