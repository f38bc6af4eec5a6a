// A tiled sharding of rank-r data is drawn as a (d0*...*d(r-2)) x d(r-1) grid of its tile
// dimensions: block (row, col) holds the data tile whose index is row (row-major over the
// leading data dims) and col, and lists every device with that data tile index (several with
// replication over the trailing subgroup dims). Blocks are coloured by their first device.
#include "tools/inspect/html_sharding.h"

#include <algorithm>

#include "hlo/strings.h"
#include "tools/inspect/html_util.h"
#include "tools/inspect/inspected_module.h"

namespace tools {
namespace {

constexpr int64_t kMaxBlocks = 1024;

void AddLeaves(const std::string& name, const hlo::Shape& shape, const hlo::HloSharding& sharding,
               std::vector<ShardedValue>* out) {
  if (!sharding.IsTuple()) {
    if (shape.IsArray()) out->push_back({name, shape, sharding});
    return;
  }
  const std::vector<hlo::Shape> leaves = shape.leaf_shapes();
  const auto& elements = sharding.tuple_elements();
  for (size_t i = 0; i < leaves.size() && i < elements.size(); ++i) {
    if (leaves[i].IsArray())
      out->push_back({hlo::StrCat(name, " {", i, "}"), leaves[i], elements[i]});
  }
}

std::string BlockLabel(const std::vector<int64_t>& devices) {
  std::string out;
  for (size_t i = 0; i < devices.size() && i < 4; ++i)
    hlo::StrAppend(&out, i ? "," : "", devices[i]);
  if (devices.size() > 4) hlo::StrAppend(&out, ",&hellip; (", devices.size(), ")");
  return out;
}

std::string BlockStyle(int64_t first_device) {
  return hlo::StrCat("background:hsl(", (first_device * 47) % 360, ",65%,80%)");
}

std::string Block(const std::string& label, const std::string& style, const std::string& title) {
  return hlo::StrCat("<div class=\"block\" style=\"", style, "\" title=\"", Escape(title), "\">",
                     label, "</div>");
}

std::string Grid(int64_t cols, const std::string& blocks) {
  const int64_t width = std::min<int64_t>(400, std::max<int64_t>(120, 56 * cols));
  return hlo::StrCat("<div class=\"grid\" style=\"grid-template-columns:repeat(", cols,
                     ",1fr);width:", width, "px\">", blocks, "</div>");
}

// The mesh line: how each data dimension is split, and the subgroup dims.
std::string MeshText(const hlo::HloSharding& s) {
  const hlo::TileAssignment& t = s.tile_assignment();
  const int64_t rank = s.TiledDataRank();
  std::string out = hlo::StrCat("mesh [");
  for (int64_t d = 0; d < t.rank(); ++d) hlo::StrAppend(&out, d ? "," : "", t.dim(d));
  out += "]: ";
  std::string parts;
  for (int64_t d = 0; d < rank; ++d) {
    if (t.dim(d) > 1)
      hlo::StrAppend(&parts, parts.empty() ? "" : ", ", "dim ", d, " in ", t.dim(d));
  }
  if (s.SubgroupReplicationDim() >= 0) {
    hlo::StrAppend(&parts, parts.empty() ? "" : ", ", "replicated x",
                   t.dim(s.SubgroupReplicationDim()));
  }
  if (s.SubgroupManualDim() >= 0) {
    hlo::StrAppend(&parts, parts.empty() ? "" : ", ", "manual x", t.dim(s.SubgroupManualDim()));
  }
  return out + (parts.empty() ? "one tile" : parts);
}

std::string TiledGrid(const hlo::HloSharding& s, const hlo::Shape& shape, std::string* mesh) {
  const hlo::TileAssignment& t = s.tile_assignment();
  const int64_t rank = s.TiledDataRank();
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < rank; ++d) rows *= t.dim(d);
  const int64_t cols = rank > 0 ? t.dim(rank - 1) : 1;
  *mesh = MeshText(s);
  if (rows * cols > kMaxBlocks) return hlo::StrCat("<p>(", rows * cols, " blocks: not drawn)</p>");
  std::vector<std::vector<int64_t>> devices(rows * cols);
  t.ForEach([&](absl::Span<const int64_t> index, int64_t device) {
    int64_t row = 0;
    for (int64_t d = 0; d + 1 < rank; ++d) row = row * t.dim(d) + index[d];
    devices[row * cols + (rank > 0 ? index[rank - 1] : 0)].push_back(device);
  });
  std::string blocks;
  for (int64_t b = 0; b < rows * cols; ++b) {
    std::vector<int64_t>& held = devices[b];
    std::sort(held.begin(), held.end());
    std::string devs;
    for (int64_t d : held) hlo::StrAppend(&devs, devs.empty() ? "" : ",", d);
    blocks += Block(BlockLabel(held), BlockStyle(held.empty() ? 0 : held[0]),
                    hlo::StrCat("block (", b / cols, ",", b % cols, ") of ", ShortShape(shape),
                                ": devices ", devs));
  }
  return Grid(cols, blocks);
}

std::string LeafView(const ShardedValue& v, int64_t num_devices) {
  std::string mesh, grid;
  const hlo::HloSharding& s = v.sharding;
  if (s.IsTiled()) {
    grid = TiledGrid(s, v.shape, &mesh);
  } else if (std::optional<int64_t> device = s.UniqueDevice();
             device && s.IsTileMaximal() && !s.IsReplicated()) {
    mesh = "one device";
    grid = Grid(1, Block(hlo::StrCat("device ", *device), BlockStyle(*device), "maximal"));
  } else {
    const std::string what = s.IsManual() ? "manual" : "replicated";
    mesh = hlo::StrCat(what, " on ", num_devices, " devices");
    grid = Grid(1, Block(hlo::StrCat(what, ": all ", num_devices), "background:#ddd", mesh));
  }
  return hlo::StrCat("<div class=\"sharding\"><div class=\"name\">", Escape(v.name), " ",
                     Escape(ShortShape(v.shape)), "</div><div class=\"spec\">",
                     Escape(s.ToStringWithoutMetadata()), "<br>", Escape(mesh), "</div>", grid,
                     "</div>\n");
}

}  // namespace

std::vector<ShardedValue> EntryShardings(const hlo::HloModule& module) {
  std::vector<ShardedValue> out;
  const hlo::HloComputation* entry = module.entry_computation();
  if (entry == nullptr) return out;
  for (const auto& instr : entry->instructions()) {
    if (instr->opcode() == hlo::HloOpcode::kParameter && instr->has_sharding()) {
      AddLeaves(instr->name(), instr->shape(), instr->sharding(), &out);
    }
  }
  const hlo::HloInstruction* root = entry->root_instruction();
  if (root != nullptr && root->has_sharding()) {
    AddLeaves("result", root->shape(), root->sharding(), &out);
  }
  return out;
}

std::string ShardingSection(const std::vector<ShardedValue>& values, int64_t num_devices,
                            const std::string& source, const std::string& id) {
  std::string out =
      hlo::StrCat("<section id=\"", id, "\">\n<h2>Shardings of parameters and results</h2>\n<p>",
                  Escape(source), "</p>\n");
  if (values.empty()) {
    return out +
           "<p>(no parameter or result carries a sharding; pass the module before "
           "partitioning with --original to see its shardings)</p>\n</section>\n";
  }
  out += "<div class=\"shardings\">\n";
  for (const ShardedValue& v : values) out += LeafView(v, num_devices);
  return out + "</div>\n</section>\n";
}

}  // namespace tools
