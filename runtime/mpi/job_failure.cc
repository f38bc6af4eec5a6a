// A FailureReport travels as text: a line "RANK EXECUTION TIMEOUT NBLAMED B1 B2 ...", a line
// with the collective's name, then the message (any bytes).
#include "runtime/mpi/job_failure.h"

#include <algorithm>
#include <sstream>

#include "hlo/strings.h"

namespace runtime::mpi {
namespace {

std::string RankAndDevices(int rank, int64_t per_process) {
  const int64_t first = rank * per_process;
  return per_process == 1
             ? hlo::StrCat("rank ", rank, " (device ", first, ")")
             : hlo::StrCat("rank ", rank, " (devices ", first, "-", first + per_process - 1, ")");
}

// "ranks 0, 1, 3" or "rank 0".
std::string RankList(const std::vector<int>& ranks) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) hlo::StrAppend(&out, i ? ", " : "", ranks[i]);
  return out;
}

}  // namespace

std::string EncodeFailureReport(const FailureReport& report) {
  std::string out = hlo::StrCat(report.rank, " ", report.execution, " ", report.timeout_seconds,
                                " ", report.blamed.size());
  for (int rank : report.blamed) hlo::StrAppend(&out, " ", rank);
  return hlo::StrCat(out, "\n", report.collective, "\n", report.message);
}

absl::StatusOr<FailureReport> DecodeFailureReport(std::string_view bytes) {
  const std::string text(bytes);
  const size_t first = text.find('\n');
  const size_t second = first == std::string::npos ? first : text.find('\n', first + 1);
  FailureReport report;
  size_t blamed = 0;
  std::istringstream line(text.substr(0, first));
  if (second == std::string::npos ||
      !(line >> report.rank >> report.execution >> report.timeout_seconds >> blamed)) {
    return absl::InternalError("a malformed failure report");
  }
  report.blamed.resize(blamed);
  for (int& rank : report.blamed) {
    if (!(line >> rank)) return absl::InternalError("a malformed failure report");
  }
  report.collective = text.substr(first + 1, second - first - 1);
  report.message = text.substr(second + 1);
  return report;
}

std::string FirstFailureLine(const std::vector<FailureReport>& reports,
                             int64_t devices_per_process) {
  for (const FailureReport& report : reports) {
    if (report.blamed.empty()) {
      return hlo::StrCat(RankAndDevices(report.rank, devices_per_process),
                         " failed first: ", report.message);
    }
  }
  const FailureReport& earliest = reports.front();
  const int culprit = earliest.blamed.front();
  std::vector<int> waiting;
  for (const FailureReport& report : reports) {
    const bool blames = std::find(report.blamed.begin(), report.blamed.end(), culprit) !=
                        report.blamed.end();
    if (blames && std::find(waiting.begin(), waiting.end(), report.rank) == waiting.end()) {
      waiting.push_back(report.rank);
    }
  }
  std::sort(waiting.begin(), waiting.end());
  return hlo::StrCat(RankAndDevices(culprit, devices_per_process),
                     " failed first: it did not answer at collective ", earliest.collective,
                     " (execution ", earliest.execution, ") within ", earliest.timeout_seconds,
                     " s (--collective-timeout): it died or hangs; ", RankList(waiting),
                     " waited for it");
}

}  // namespace runtime::mpi
