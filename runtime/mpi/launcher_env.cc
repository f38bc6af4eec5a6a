#include "runtime/mpi/launcher_env.h"

#include <cstdlib>
#include <string_view>

namespace runtime::mpi {
namespace {

struct LauncherVars {
  const char* launcher;
  const char* rank;
  const char* size;
  const char* local_rank;
};

// In order of preference: mpirun also sets PMI variables under some configurations.
constexpr LauncherVars kLaunchers[] = {
    {"mpirun", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
    {"pmi", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"},
    {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
};

// The variable's value as a non-negative int, or -1 when unset or malformed.
int ReadInt(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return -1;
  char* end = nullptr;
  const long parsed = std::strtol(value, &end, 10);
  return *end == '\0' && parsed >= 0 && parsed < (1 << 30) ? static_cast<int>(parsed) : -1;
}

}  // namespace

std::optional<LauncherEnv> LauncherEnvFromEnvironment() {
  for (const LauncherVars& vars : kLaunchers) {
    const int rank = ReadInt(vars.rank);
    const int size = ReadInt(vars.size);
    if (rank < 0 || size < 1 || rank >= size) continue;
    const int local = ReadInt(vars.local_rank);
    return LauncherEnv{rank, size, local < 0 ? rank : local, vars.launcher};
  }
  return std::nullopt;
}

}  // namespace runtime::mpi
