#include "spmd/cost/device_model.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "hlo/strings.h"
#include "spmd/cost/json_value.h"

namespace spmd {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// GB/s to bytes per microsecond.
constexpr double GBps(double gbps) { return gbps * 1e3; }
// TFLOP/s to FLOP per microsecond.
constexpr double TFlops(double tflops) { return tflops * 1e6; }

DeviceModel Gpu(std::string name, double memory_gib, double memory_gbps) {
  DeviceModel m;
  m.name = std::move(name);
  m.f32_flops_per_us = TFlops(67);    // FP32 without tensor cores (XLA's default precision).
  m.bf16_flops_per_us = TFlops(989);  // Dense bf16 tensor cores.
  m.int_flops_per_us = TFlops(67);
  m.compute_efficiency = 0.7;
  m.memory_bytes = memory_gib * kGiB;
  m.memory_bandwidth_bytes_per_us = GBps(memory_gbps);
  m.loop_step_us = 2.0;  // A few kernel launches and the loop's own control.
  m.levels = {{"nvlink", 8, {8.0, GBps(350)}}, {"infiniband", 0, {15.0, GBps(45)}}};
  return m;
}

std::vector<DeviceModel> Builtins() {
  std::vector<DeviceModel> models = {Gpu("h100-nvlink", 80, 3350), Gpu("h200-nvlink", 141, 4800)};
  DeviceModel tpu;
  tpu.name = "tpu-torus";
  tpu.f32_flops_per_us = TFlops(275);
  tpu.bf16_flops_per_us = TFlops(275);
  tpu.int_flops_per_us = TFlops(275);
  tpu.compute_efficiency = 0.8;
  tpu.memory_bytes = 32 * kGiB;
  tpu.memory_bandwidth_bytes_per_us = GBps(1200);
  tpu.loop_step_us = 1.0;
  tpu.levels = {{"ici-board", 4, {2.0, GBps(100)}}, {"ici-torus", 0, {4.0, GBps(45)}}};
  models.push_back(tpu);
  // A slow, balanced machine for tests: compute and communication take similar time for
  // mid-sized dots, so strategy choices are sensitive to both.
  DeviceModel cpu;
  cpu.name = "cpu-test";
  cpu.f32_flops_per_us = 1e5;  // 100 GFLOP/s.
  cpu.bf16_flops_per_us = 1e5;
  cpu.int_flops_per_us = 1e5;
  cpu.memory_bytes = 8 * kGiB;
  cpu.memory_bandwidth_bytes_per_us = GBps(20);
  cpu.levels = {{"shared-memory", 0, {5.0, GBps(10)}}};
  models.push_back(cpu);
  return models;
}

// bf16, f16 and the 8- and 4-bit floating types run on the low-precision units.
bool IsNarrowFloat(hlo::PrimitiveType type) {
  return hlo::IsFloatingPointType(type) && hlo::BitWidth(type) <= 16;
}

absl::StatusOr<double> NumberField(const JsonValue& object, std::string_view key, double fallback,
                                   bool required = false) {
  const JsonValue* v = object.Find(key);
  if (v == nullptr) {
    if (required) return absl::InvalidArgumentError(hlo::StrCat("missing field \"", key, "\""));
    return fallback;
  }
  if (v->type != JsonValue::Type::kNumber || !(v->number >= 0)) {
    return absl::InvalidArgumentError(
        hlo::StrCat("field \"", key, "\" must be a non-negative number"));
  }
  return v->number;
}

absl::Status ParseLevels(const JsonValue& levels, DeviceModel& model) {
  if (levels.type != JsonValue::Type::kArray || levels.array.empty()) {
    return absl::InvalidArgumentError("field \"levels\" must be a non-empty array");
  }
  for (const JsonValue& level : levels.array) {
    if (level.type != JsonValue::Type::kObject) {
      return absl::InvalidArgumentError("each entry of \"levels\" must be an object");
    }
    MeshLevel out;
    if (const JsonValue* n = level.Find("name"); n && n->type == JsonValue::Type::kString) {
      out.name = n->string;
    }
    absl::StatusOr<double> per_group = NumberField(level, "devices_per_group", 0);
    absl::StatusOr<double> latency = NumberField(level, "latency_us", 0, true);
    absl::StatusOr<double> gbps = NumberField(level, "bandwidth_gbps", 0, true);
    for (const auto* s : {&per_group, &latency, &gbps}) {
      if (!s->ok()) return s->status();
    }
    if (*gbps <= 0) return absl::InvalidArgumentError("\"bandwidth_gbps\" must be positive");
    out.devices_per_group = static_cast<int64_t>(*per_group);
    out.link = {*latency, GBps(*gbps)};
    model.levels.push_back(std::move(out));
  }
  return absl::OkStatus();
}

}  // namespace

double DeviceModel::ComputeTimeUs(double flops, hlo::PrimitiveType type) const {
  double rate = hlo::IsIntegralType(type) ? int_flops_per_us
                : IsNarrowFloat(type)     ? bf16_flops_per_us
                                          : f32_flops_per_us;
  return flops / (rate * compute_efficiency);
}

double DeviceModel::MemoryTimeUs(double bytes) const {
  return memory_bandwidth_bytes_per_us > 0 ? bytes / memory_bandwidth_bytes_per_us : 0;
}

const MeshLevel& DeviceModel::LevelFor(absl::Span<const int64_t> devices) const {
  for (const MeshLevel& level : levels) {
    if (level.devices_per_group <= 0 || devices.empty()) return level;
    const int64_t block = devices.front() / level.devices_per_group;
    if (std::all_of(devices.begin(), devices.end(),
                    [&](int64_t d) { return d / level.devices_per_group == block; })) {
      return level;
    }
  }
  return levels.back();
}

const LinkModel& DeviceModel::LinkFor(const std::vector<std::vector<int64_t>>& groups) const {
  size_t worst = 0;
  for (const std::vector<int64_t>& group : groups) {
    const MeshLevel* level = &LevelFor(group);
    worst = std::max(worst, static_cast<size_t>(level - levels.data()));
  }
  return levels[worst].link;
}

std::string DeviceModel::Describe() const {
  std::ostringstream out;
  out << name << ": f32 " << f32_flops_per_us / 1e6 << " TFLOP/s, bf16 "
      << bf16_flops_per_us / 1e6 << " TFLOP/s, efficiency " << compute_efficiency << ", memory "
      << memory_bytes / kGiB << " GiB";
  if (memory_bandwidth_bytes_per_us > 0) {
    out << " at " << memory_bandwidth_bytes_per_us / 1e3 << " GB/s";
  }
  if (loop_step_us > 0) out << ", " << loop_step_us << " us per loop step";
  for (const MeshLevel& level : levels) {
    out << "; " << level.name << " (" << (level.devices_per_group > 0
                                              ? std::to_string(level.devices_per_group)
                                              : std::string("all"))
        << " devices): " << level.link.latency_us << " us + "
        << level.link.bandwidth_bytes_per_us / 1e3 << " GB/s";
  }
  return out.str();
}

DeviceModel DefaultDeviceModel() { return Builtins().front(); }

std::vector<std::string> BuiltinDeviceModelNames() {
  std::vector<std::string> names;
  for (const DeviceModel& m : Builtins()) names.push_back(m.name);
  return names;
}

absl::StatusOr<DeviceModel> DeviceModelByName(std::string_view name) {
  for (DeviceModel& m : Builtins()) {
    if (m.name == name) return std::move(m);
  }
  std::string known;
  for (const std::string& n : BuiltinDeviceModelNames()) hlo::StrAppend(&known, " ", n);
  return absl::NotFoundError(hlo::StrCat("unknown device model \"", name, "\"; built-in models:",
                                         known, " (or give a path to a JSON file)"));
}

absl::StatusOr<DeviceModel> ParseDeviceModelJson(std::string_view json) {
  absl::StatusOr<JsonValue> doc = ParseJson(json);
  if (!doc.ok()) return doc.status();
  if (doc->type != JsonValue::Type::kObject) {
    return absl::InvalidArgumentError("a device model must be a JSON object");
  }
  DeviceModel model;
  if (const JsonValue* n = doc->Find("name"); n && n->type == JsonValue::Type::kString) {
    model.name = n->string;
  } else {
    model.name = "custom";
  }
  const JsonValue* rates = doc->Find("flops_per_second");
  if (rates == nullptr || rates->type != JsonValue::Type::kObject) {
    return absl::InvalidArgumentError("missing object field \"flops_per_second\"");
  }
  absl::StatusOr<double> f32 = NumberField(*rates, "f32", 0, true);
  if (!f32.ok()) return f32.status();
  if (*f32 <= 0) return absl::InvalidArgumentError("\"flops_per_second.f32\" must be positive");
  absl::StatusOr<double> bf16 = NumberField(*rates, "bf16", *f32);
  absl::StatusOr<double> integer = NumberField(*rates, "int", *f32);
  absl::StatusOr<double> efficiency = NumberField(*doc, "compute_efficiency", 1.0);
  absl::StatusOr<double> memory = NumberField(*doc, "memory_bytes", 0, true);
  absl::StatusOr<double> loop_step = NumberField(*doc, "loop_step_us", 0);
  absl::StatusOr<double> memory_gbps = NumberField(*doc, "memory_bandwidth_gbps", 0);
  for (const auto* s : {&bf16, &integer, &efficiency, &memory, &loop_step, &memory_gbps}) {
    if (!s->ok()) return s->status();
  }
  if (*efficiency <= 0 || *efficiency > 1) {
    return absl::InvalidArgumentError("\"compute_efficiency\" must be in (0, 1]");
  }
  model.f32_flops_per_us = *f32 / 1e6;
  model.bf16_flops_per_us = *bf16 > 0 ? *bf16 / 1e6 : model.f32_flops_per_us;
  model.int_flops_per_us = *integer > 0 ? *integer / 1e6 : model.f32_flops_per_us;
  model.compute_efficiency = *efficiency;
  model.memory_bytes = *memory;
  model.memory_bandwidth_bytes_per_us = GBps(*memory_gbps);
  if (*loop_step < 0) return absl::InvalidArgumentError("\"loop_step_us\" must not be negative");
  model.loop_step_us = *loop_step;
  const JsonValue* levels = doc->Find("levels");
  if (levels == nullptr) return absl::InvalidArgumentError("missing field \"levels\"");
  if (absl::Status s = ParseLevels(*levels, model); !s.ok()) return s;
  return model;
}

size_t ChooseNearFastest(absl::Span<const double> us, absl::Span<const int64_t> bytes,
                         const std::function<bool(size_t, size_t)>& prefer) {
  if (us.empty()) return 0;
  const double least = *std::min_element(us.begin(), us.end());
  size_t best = us.size();
  for (size_t i = 0; i < us.size(); ++i) {
    if (us[i] > least * (1 + kEstimateTolerance)) continue;
    if (best == us.size() || bytes[i] < bytes[best]) {
      best = i;
    } else if (bytes[i] == bytes[best] && (prefer ? prefer(i, best) : us[i] < us[best])) {
      best = i;
    }
  }
  return best;
}

absl::StatusOr<DeviceModel> LoadDeviceModel(std::string_view spec) {
  if (spec.empty()) return DefaultDeviceModel();
  if (spec.find('/') == std::string_view::npos && spec.find(".json") == std::string_view::npos) {
    return DeviceModelByName(spec);
  }
  std::ifstream in{std::string(spec)};
  if (!in) return absl::NotFoundError(hlo::StrCat(spec, ": cannot open device model file"));
  std::stringstream buffer;
  buffer << in.rdbuf();
  absl::StatusOr<DeviceModel> model = ParseDeviceModelJson(buffer.str());
  if (!model.ok()) {
    return absl::InvalidArgumentError(
        hlo::StrCat(spec, ": invalid device model: ", hlo::ToStd(model.status().message())));
  }
  return model;
}

}  // namespace spmd
