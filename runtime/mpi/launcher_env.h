// Where a process stands in a job started by a launcher, read from the environment the
// launcher sets: Open MPI's mpirun (OMPI_COMM_WORLD_RANK / _SIZE / _LOCAL_RANK), MPICH/Hydra
// and PMI launchers (PMI_RANK / PMI_SIZE, MPI_LOCALRANKID), SLURM's srun (SLURM_PROCID /
// SLURM_NTASKS / SLURM_LOCALID). No MPI dependency: spmd-run reads it to decide whether to
// start MPI at all.
#ifndef RUNTIME_MPI_LAUNCHER_ENV_H_
#define RUNTIME_MPI_LAUNCHER_ENV_H_

#include <optional>
#include <string>

namespace runtime::mpi {

struct LauncherEnv {
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  std::string launcher;  // "mpirun", "pmi" or "slurm".
};

// The first launcher whose variables are all set and well formed; nullopt when none is.
std::optional<LauncherEnv> LauncherEnvFromEnvironment();

}  // namespace runtime::mpi

#endif  // RUNTIME_MPI_LAUNCHER_ENV_H_
