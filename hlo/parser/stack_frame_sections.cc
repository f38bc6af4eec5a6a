// Reads the four sections one after the other; each table entry remembers where its label
// stands, so that the range checks run once every table is known (a parent may name a later
// frame) still point at the entry.
#include "hlo/parser/stack_frame_sections.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <vector>

#include "absl/types/span.h"
#include "hlo/status_macros.h"
#include "hlo/strings.h"

namespace hlo {
namespace {

bool AtEntryLabel(TextCursor& c) {
  const char next = c.Peek();
  return std::isdigit(static_cast<unsigned char>(next)) || next == '-';
}

// Entries `N "name"` while the next token is a number.
absl::Status ParseNames(TextCursor& c, std::string_view what, std::vector<std::string>* names) {
  while (AtEntryLabel(c)) {
    RETURN_IF_ERROR(c.ParseInt("an entry number").status());
    ASSIGN_OR_RETURN(std::string name, c.ParseQuoted(what));
    names->push_back(std::move(name));
  }
  return absl::OkStatus();
}

absl::Status ExpectSection(TextCursor& c, std::string_view section, std::string_view previous) {
  if (c.TryConsumeWord(section)) return absl::OkStatus();
  return c.Error(
      StrCat("expected '", section, "' after the ", previous, " section, found ", c.Describe()));
}

struct IntField {
  std::string_view name;
  int32_t* value;
};

absl::StatusOr<int32_t> ParseInt32(TextCursor& c, std::string_view name) {
  c.SkipSpace();
  const size_t at = c.pos();
  ASSIGN_OR_RETURN(int64_t value, c.ParseInt(name));
  if (value < std::numeric_limits<int32_t>::min() || value > std::numeric_limits<int32_t>::max()) {
    return c.ErrorAt(at, StrCat(name, "=", value, " is out of the int32 range"));
  }
  return static_cast<int32_t>(value);
}

// `{name=int ...}` setting each of `fields` exactly once; entry `entry` of `section`.
absl::Status ParseIntFields(TextCursor& c, std::string_view section, size_t entry,
                            absl::Span<const IntField> fields) {
  c.SkipSpace();
  const size_t open = c.pos();
  RETURN_IF_ERROR(c.Expect('{', StrCat("to start a ", section, " entry")));
  std::vector<bool> seen(fields.size(), false);
  while (!c.TryConsume('}')) {
    c.TryConsume(',');
    c.SkipSpace();
    const size_t at = c.pos();
    const std::string_view name = c.ParseWord();
    if (name.empty()) {
      return c.Error(
          StrCat("expected an attribute or '}' in a ", section, " entry, found ", c.Describe()));
    }
    auto it = std::find_if(fields.begin(), fields.end(),
                           [&](const IntField& f) { return f.name == name; });
    if (it == fields.end())
      return c.ErrorAt(at, StrCat("unknown ", section, " attribute '", name, "'"));
    if (seen[it - fields.begin()]) {
      return c.ErrorAt(at, StrCat(section, " attribute '", name, "' given twice"));
    }
    seen[it - fields.begin()] = true;
    RETURN_IF_ERROR(c.Expect('=', StrCat("after '", name, "'")));
    ASSIGN_OR_RETURN(*it->value, ParseInt32(c, name));
  }
  for (size_t k = 0; k < fields.size(); ++k) {
    if (!seen[k]) {
      return c.ErrorAt(open,
                       StrCat(section, " entry ", entry + 1, ": ", fields[k].name, " is missing"));
    }
  }
  return absl::OkStatus();
}

// The label offsets of the entries read.
absl::StatusOr<std::vector<size_t>> ParseLocations(
    TextCursor& c, std::vector<StackFrameIndex::FileLocation>* locations) {
  std::vector<size_t> labels;
  while (AtEntryLabel(c)) {
    labels.push_back(c.pos());
    RETURN_IF_ERROR(c.ParseInt("an entry number").status());
    StackFrameIndex::FileLocation l;
    const IntField fields[] = {{"file_name_id", &l.file_name_id},
                               {"function_name_id", &l.function_name_id},
                               {"line", &l.line},
                               {"end_line", &l.end_line},
                               {"column", &l.column},
                               {"end_column", &l.end_column}};
    RETURN_IF_ERROR(ParseIntFields(c, "FileLocations", locations->size(), fields));
    locations->push_back(l);
  }
  return labels;
}

absl::StatusOr<std::vector<size_t>> ParseFrames(TextCursor& c,
                                                std::vector<StackFrameIndex::StackFrame>* frames) {
  std::vector<size_t> labels;
  while (AtEntryLabel(c)) {
    labels.push_back(c.pos());
    RETURN_IF_ERROR(c.ParseInt("an entry number").status());
    StackFrameIndex::StackFrame f;
    int32_t parent = 0;
    const IntField fields[] = {{"file_location_id", &f.file_location_id},
                               {"parent_frame_id", &parent}};
    RETURN_IF_ERROR(ParseIntFields(c, "StackFrames", frames->size(), fields));
    // The text writes the parent one above its id; the least int32 has nothing below it and is
    // out of range either way.
    f.parent_frame_id = parent == std::numeric_limits<int32_t>::min() ? parent : parent - 1;
    frames->push_back(f);
  }
  return labels;
}

absl::Status CheckRanges(const TextCursor& c, const StackFrameIndex& index,
                         const std::vector<size_t>& location_labels,
                         const std::vector<size_t>& frame_labels) {
  for (size_t i = 0; i < location_labels.size(); ++i) {
    if (auto problem = FileLocationProblem(index, i)) {
      return c.ErrorAt(location_labels[i], *problem);
    }
  }
  for (size_t i = 0; i < frame_labels.size(); ++i) {
    if (auto problem = StackFrameProblem(index, i, ParentIdForm::kText)) {
      return c.ErrorAt(frame_labels[i], *problem);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> ParseStackFrameSections(TextCursor& c, StackFrameIndex* index) {
  c.SkipSpace();
  const size_t start = c.pos();
  if (!c.TryConsumeWord("FileNames")) return false;
  if (c.Peek() == '{' || c.Peek() == '(') {  // A computation named FileNames.
    c.set_pos(start);
    return false;
  }
  RETURN_IF_ERROR(ParseNames(c, "a file name", &index->file_names));
  RETURN_IF_ERROR(ExpectSection(c, "FunctionNames", "FileNames"));
  RETURN_IF_ERROR(ParseNames(c, "a function name", &index->function_names));
  RETURN_IF_ERROR(ExpectSection(c, "FileLocations", "FunctionNames"));
  ASSIGN_OR_RETURN(std::vector<size_t> location_labels, ParseLocations(c, &index->file_locations));
  RETURN_IF_ERROR(ExpectSection(c, "StackFrames", "FileLocations"));
  ASSIGN_OR_RETURN(std::vector<size_t> frame_labels, ParseFrames(c, &index->stack_frames));
  RETURN_IF_ERROR(CheckRanges(c, *index, location_labels, frame_labels));
  return true;
}

}  // namespace hlo
