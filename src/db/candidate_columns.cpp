#include "db/candidate_columns.hpp"

#include <sstream>

#include "common/error.hpp"

namespace gemmtune {

const char* const kCandidateColumns =
    "candidate_id, backend, own_variant, algo_id, tile, stages, splitk, reduction, swizzle, custom, cluster_shape, "
    "inner_shape, epilogue_kernel, heuristic_rank";
const char* const kStatsColumns =
    "median_us, p10_us, p90_us, mean_us, stddev_us, min_us, max_us, samples, timer, sm_clock_mhz";

std::string sql_parameters(const std::string& columns) {
  std::istringstream is(columns);
  std::string name, out;
  while (std::getline(is, name, ',')) {
    const auto first = name.find_first_not_of(' ');
    if (!out.empty()) out += ", ";
    out += ":" + name.substr(first);
  }
  return out;
}

namespace {

// cuBLAS's own choice is stored as a cuBLASLt row whose algo_id is this (cuBLASLt's ids are never negative, and -1 is
// LtAlgoFields' "no algo"): the schema's CHECKs name the backends 'own' and 'lt', and SQLite changes a CHECK only by
// rebuilding every table.
constexpr int kBlasAlgoId = -2;

}  // namespace

void bind_candidate(SqliteStatement& s, const Candidate& c) {
  s.bind(":candidate_id", c.id());
  s.bind(":backend", std::string(to_string(c.backend == Backend::Blas ? Backend::Lt : c.backend)));
  s.bind(":heuristic_rank", c.heuristic_rank);
  // Each backend's own fields; the other backend's stay NULL (the schema's CHECKs hold the two apart).
  if (c.backend == Backend::Own) {
    s.bind(":own_variant", c.own_variant);
    for (const char* name : {":algo_id", ":tile", ":stages", ":splitk", ":reduction", ":swizzle", ":custom",
                             ":cluster_shape", ":inner_shape", ":epilogue_kernel"})
      s.bind(name, nullptr);
    return;
  }
  s.bind(":own_variant", nullptr);
  if (c.backend == Backend::Blas) {
    s.bind(":algo_id", kBlasAlgoId);
    for (const char* name : {":tile", ":stages", ":splitk", ":reduction", ":swizzle", ":custom", ":cluster_shape",
                             ":inner_shape"})
      s.bind(name, 0);
    s.bind(":epilogue_kernel", 1);  // ours runs after it wherever the problem has an epilogue
    return;
  }
  s.bind(":algo_id", c.lt.algo_id).bind(":tile", c.lt.tile).bind(":stages", c.lt.stages);
  s.bind(":splitk", c.lt.splitk).bind(":reduction", c.lt.reduction).bind(":swizzle", c.lt.swizzle);
  s.bind(":custom", c.lt.custom).bind(":cluster_shape", c.lt.cluster_shape).bind(":inner_shape", c.lt.inner_shape);
  // 2: padded (lt/lt_padding.hpp), 3: cuBLASLt's bias then our kernel; both run our epilogue kernel too. One column
  // keeps the schema as it was.
  s.bind(":epilogue_kernel", c.lt_padded ? 2 : c.lt_bias_in_gemm ? 3 : c.lt_epilogue_kernel ? 1 : 0);
}

Candidate read_candidate(const SqliteStatement& s) {
  Candidate c;
  c.backend = parse_backend(s.column_text("backend"));
  c.heuristic_rank = s.column_int("heuristic_rank");
  if (c.backend == Backend::Own) {
    c.own_variant = s.column_text("own_variant");
  } else if (s.column_int("algo_id") == kBlasAlgoId) {
    c.backend = Backend::Blas;
  } else {
    c.lt.algo_id = s.column_int("algo_id");
    c.lt.tile = s.column_int("tile");
    c.lt.stages = s.column_int("stages");
    c.lt.splitk = s.column_int("splitk");
    c.lt.reduction = s.column_int("reduction");
    c.lt.swizzle = s.column_int("swizzle");
    c.lt.custom = s.column_int("custom");
    c.lt.cluster_shape = s.column_int("cluster_shape");
    c.lt.inner_shape = s.column_int("inner_shape");
    c.lt_epilogue_kernel = s.column_int("epilogue_kernel") != 0;
    c.lt_padded = s.column_int("epilogue_kernel") == 2;
    c.lt_bias_in_gemm = s.column_int("epilogue_kernel") == 3;
  }
  const std::string stored_id = s.column_text("candidate_id");
  if (c.id() != stored_id)
    throw InputError("damaged db row: candidate fields give '" + c.id() + "' but the row says '" + stored_id + "'");
  return c;
}

void bind_stats(SqliteStatement& s, const TimingStats& t) {
  s.bind(":median_us", t.median_us).bind(":p10_us", t.p10_us).bind(":p90_us", t.p90_us);
  s.bind(":mean_us", t.mean_us).bind(":stddev_us", t.stddev_us).bind(":min_us", t.min_us).bind(":max_us", t.max_us);
  s.bind(":samples", t.samples).bind(":timer", t.timer).bind(":sm_clock_mhz", t.sm_clock_mhz);
}

TimingStats read_stats(const SqliteStatement& s) {
  TimingStats t;
  t.median_us = s.column_double("median_us");
  t.p10_us = s.column_double("p10_us");
  t.p90_us = s.column_double("p90_us");
  t.mean_us = s.column_double("mean_us");
  t.stddev_us = s.column_double("stddev_us");
  t.min_us = s.column_double("min_us");
  t.max_us = s.column_double("max_us");
  t.samples = s.column_int("samples");
  t.timer = s.column_text("timer");
  t.sm_clock_mhz = s.column_double("sm_clock_mhz");
  return t;
}

}  // namespace gemmtune
