// Template part of ops/loops.hpp.
#pragma once

#include <tbb/parallel_for.h>

#include <algorithm>

namespace tessera::cpu {

template <class Body>
void for_each_run(const BroadcastPlan& plan, const Body& body) {
  const int64_t outer = plan.outer_count();
  const size_t k = plan.step.size();
  // Chunks of at least 4K elements per task; a long run is cut when there are few outer indices.
  constexpr int64_t kChunk = 1 << 12;
  const int64_t chunks = outer >= 8 ? 1 : std::max<int64_t>(1, plan.run / kChunk);
  const int64_t per_chunk = (plan.run + chunks - 1) / chunks;
  const int64_t grain = std::max<int64_t>(1, kChunk / std::max<int64_t>(1, plan.run));
  tbb::parallel_for(
      tbb::blocked_range<int64_t>(0, outer * chunks, grain), [&](const tbb::blocked_range<int64_t>& r) {
        int64_t off[8];
        for (int64_t item = r.begin(); item != r.end(); ++item) {
          const int64_t o = item / chunks, c = item % chunks;
          plan.offsets(o, off);
          const int64_t begin = c * per_chunk;
          const int64_t len = std::min(per_chunk, plan.run - begin);
          if (len <= 0) continue;
          for (size_t i = 0; i < k; ++i) off[i] += begin * plan.step[i];
          body(off, o * plan.run + begin, len);
        }
      });
}

}  // namespace tessera::cpu
