// Einsum equations, parsed once for the op's shape inference and kernel and for the pass that
// lowers two-operand einsums to MatMul (passes/lower_einsum.cpp). Header-only for the same reason
// as broadcast.hpp.
//
// Subscripts are the letters a-z and A-Z (ids 0-51); an ellipsis stands for the dims a term has
// beyond its letters, right-aligned and broadcast across the terms as numpy does, and becomes ids
// 52, 53, ... (the outermost ellipsis dim first). Spaces are ignored (PyTorch writes them).
// Without "->" the output is the ellipsis dims, then the letters used exactly once in increasing
// ASCII order (numpy's implicit mode).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/error.hpp"
#include "tessera/graph.hpp"

namespace tessera::ops {

constexpr int kEinsumEllipsisBase = 52;

struct EinsumSpec {
  std::vector<std::vector<int>> inputs;  // subscript ids per input axis
  std::vector<int> output;               // subscript ids per output axis
  std::vector<int64_t> dims;             // per id: its size over the broadcast; -1 if unused
};

inline int einsum_letter_id(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -1;
}

inline std::string einsum_id_name(int id) {
  if (id < 26) return std::string(1, static_cast<char>('a' + id));
  if (id < kEinsumEllipsisBase) return std::string(1, static_cast<char>('A' + id - 26));
  return "...[" + std::to_string(id - kEinsumEllipsisBase) + "]";
}

// Parses `equation` for inputs of these shapes; throws Error("<where>: ...") naming attribute
// 'equation' for anything malformed or inconsistent with the shapes.
inline EinsumSpec parse_einsum(const std::string& equation, const std::vector<Shape>& shapes,
                               const std::string& where) {
  auto fail = [&](const std::string& why) {
    throw Error(where + ": attribute 'equation' = '" + equation + "': " + why);
  };
  std::string eq;
  for (char c : equation) {
    if (c != ' ') eq.push_back(c);
  }
  const size_t arrow = eq.find("->");
  if (arrow != std::string::npos && eq.find("->", arrow + 2) != std::string::npos) {
    fail("'->' appears more than once");
  }
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms(1);
  for (char c : lhs) {
    if (c == ',') {
      terms.emplace_back();
    } else {
      terms.back().push_back(c);
    }
  }
  if (terms.size() != shapes.size()) {
    fail(std::to_string(terms.size()) + " input term(s) for " + std::to_string(shapes.size()) +
         " input(s)");
  }
  // Letters of one term and whether it has an ellipsis (and where).
  struct Term {
    std::vector<int> before, after;
    bool ellipsis = false;
  };
  auto split = [&](const std::string& text) {
    Term t;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text.compare(i, 3, "...") == 0) {
        if (t.ellipsis) fail("a term has two ellipses");
        t.ellipsis = true;
        i += 2;
        continue;
      }
      const int id = einsum_letter_id(text[i]);
      if (id < 0) fail(std::string("'") + text[i] + "' is not a subscript letter");
      (t.ellipsis ? t.after : t.before).push_back(id);
    }
    return t;
  };
  EinsumSpec spec;
  spec.dims.assign(kEinsumEllipsisBase, -1);
  std::vector<Term> parsed;
  int64_t ellipsis_rank = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    parsed.push_back(split(terms[i]));
    const Term& t = parsed.back();
    const int64_t letters = static_cast<int64_t>(t.before.size() + t.after.size());
    const int64_t rank = static_cast<int64_t>(shapes[i].size());
    if (rank < letters || (!t.ellipsis && rank != letters)) {
      fail("term " + std::to_string(i) + " '" + terms[i] + "' does not match input " +
           std::to_string(i) + " of rank " + std::to_string(rank));
    }
    if (t.ellipsis) ellipsis_rank = std::max(ellipsis_rank, rank - letters);
  }
  spec.dims.resize(static_cast<size_t>(kEinsumEllipsisBase + ellipsis_rank), -1);
  std::vector<int> count(spec.dims.size(), 0);
  for (size_t i = 0; i < parsed.size(); ++i) {
    const Term& t = parsed[i];
    std::vector<int> ids = t.before;
    const int64_t own = static_cast<int64_t>(shapes[i].size() - t.before.size() - t.after.size());
    for (int64_t e = ellipsis_rank - own; e < ellipsis_rank; ++e) {
      ids.push_back(kEinsumEllipsisBase + static_cast<int>(e));
    }
    ids.insert(ids.end(), t.after.begin(), t.after.end());
    for (size_t axis = 0; axis < ids.size(); ++axis) {
      const int id = ids[axis];
      const int64_t d = shapes[i][axis];
      int64_t& known = spec.dims[static_cast<size_t>(id)];
      ++count[static_cast<size_t>(id)];
      if (known < 0 || known == d) {
        known = d;
      } else if (id >= kEinsumEllipsisBase && (known == 1 || d == 1)) {
        known = std::max(known, d);  // ellipsis dims broadcast
      } else {
        fail("subscript '" + einsum_id_name(id) + "' is " + std::to_string(known) +
             " in one place and " + std::to_string(d) + " in input " + std::to_string(i));
      }
    }
    spec.inputs.push_back(std::move(ids));
  }
  if (arrow == std::string::npos) {
    for (int64_t e = 0; e < ellipsis_rank; ++e) {
      spec.output.push_back(kEinsumEllipsisBase + static_cast<int>(e));
    }
    std::vector<char> once;
    for (int id = 0; id < kEinsumEllipsisBase; ++id) {
      if (count[static_cast<size_t>(id)] == 1) {
        once.push_back(einsum_id_name(id)[0]);
      }
    }
    std::sort(once.begin(), once.end());
    for (char c : once) spec.output.push_back(einsum_letter_id(c));
  } else {
    const Term out = split(eq.substr(arrow + 2));
    spec.output = out.before;
    if (out.ellipsis) {
      for (int64_t e = 0; e < ellipsis_rank; ++e) {
        spec.output.push_back(kEinsumEllipsisBase + static_cast<int>(e));
      }
    } else if (ellipsis_rank > 0) {
      // numpy sums ellipsis dims the output leaves out only when they are all of size 1.
      for (int64_t e = 0; e < ellipsis_rank; ++e) {
        if (spec.dims[static_cast<size_t>(kEinsumEllipsisBase + e)] != 1) {
          fail("the output has no ellipsis but the inputs' ellipsis dims are not all 1");
        }
      }
    }
    spec.output.insert(spec.output.end(), out.after.begin(), out.after.end());
    std::vector<bool> seen(spec.dims.size(), false);
    for (int id : spec.output) {
      if (count[static_cast<size_t>(id)] == 0) {
        fail("output subscript '" + einsum_id_name(id) + "' is in no input");
      }
      if (seen[static_cast<size_t>(id)]) {
        fail("output subscript '" + einsum_id_name(id) + "' appears twice");
      }
      seen[static_cast<size_t>(id)] = true;
    }
  }
  return spec;
}

inline Shape einsum_output_shape(const EinsumSpec& spec) {
  Shape out;
  for (int id : spec.output) out.push_back(spec.dims[static_cast<size_t>(id)]);
  return out;
}

}  // namespace tessera::ops
