#include "problem/candidate.hpp"

#include <cstdio>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/error.hpp"

namespace gemmtune {
namespace {

constexpr const char* kBlasCandidateId = "cublas/sgemm";

}  // namespace

bool LtAlgoFields::operator==(const LtAlgoFields& o) const {
  return algo_id == o.algo_id && tile == o.tile && stages == o.stages && splitk == o.splitk &&
         reduction == o.reduction && swizzle == o.swizzle && custom == o.custom && cluster_shape == o.cluster_shape &&
         inner_shape == o.inner_shape;
}

const char* to_string(Backend b) {
  switch (b) {
    case Backend::Own: return "own";
    case Backend::Lt: return "lt";
    case Backend::Blas: return "cublas";
  }
  return "?";
}

Backend parse_backend(const std::string& s) {
  if (s == "own") return Backend::Own;
  if (s == "lt") return Backend::Lt;
  if (s == "cublas") return Backend::Blas;
  throw InputError("unknown backend '" + s + "' (expected own, lt or cublas)");
}

std::string Candidate::id() const {
  if (backend == Backend::Own) return "own/" + own_variant;
  if (backend == Backend::Blas) return kBlasCandidateId;
  std::ostringstream os;
  os << "lt/a" << lt.algo_id << "-t" << lt.tile << "-s" << lt.stages << "-k" << lt.splitk << "-r" << lt.reduction
     << "-w" << lt.swizzle << "-c" << lt.custom << "-cl" << lt.cluster_shape << "-i" << lt.inner_shape;
  if (lt_padded)
    os << "+pad";
  else if (lt_bias_in_gemm)
    os << "+bias";
  else if (lt_epilogue_kernel)
    os << "+epi";
  return os.str();
}

Candidate Candidate::parse_id(const std::string& id) {
  Candidate c;
  if (id.rfind("own/", 0) == 0 && id.size() > 4) {
    c.backend = Backend::Own;
    c.own_variant = id.substr(4);
    return c;
  }
  if (id == kBlasCandidateId) {
    c.backend = Backend::Blas;
    return c;
  }
  if (id.rfind("lt/", 0) == 0) {
    std::string body = id.substr(3);
    for (const std::string suffix : {"+epi", "+pad", "+bias"})
      if (body.size() > suffix.size() && body.compare(body.size() - suffix.size(), suffix.size(), suffix) == 0) {
        c.lt_epilogue_kernel = true;
        c.lt_padded = suffix == "+pad";
        c.lt_bias_in_gemm = suffix == "+bias";
        body.resize(body.size() - suffix.size());
        break;
      }
    LtAlgoFields& f = c.lt;
    int consumed = 0;
    const int n = std::sscanf(body.c_str(), "a%d-t%d-s%d-k%d-r%d-w%d-c%d-cl%d-i%d%n", &f.algo_id, &f.tile, &f.stages,
                              &f.splitk, &f.reduction, &f.swizzle, &f.custom, &f.cluster_shape, &f.inner_shape,
                              &consumed);
    if (n == 9 && static_cast<std::size_t>(consumed) == body.size()) {
      c.backend = Backend::Lt;
      return c;
    }
  }
  throw InputError("bad candidate id '" + id + "' (expected own/<variant>, lt/a<id>-t..-s..-k..-r..-w..-c..-cl..-i.. or " +
                   std::string(kBlasCandidateId) + ")");
}

void to_json(nlohmann::json& j, const Candidate& c) {
  j = nlohmann::json{{"id", c.id()}, {"backend", to_string(c.backend)}};
  if (c.backend == Backend::Own) {
    j["variant"] = c.own_variant;
  } else if (c.backend == Backend::Lt) {
    j["algo"] = {{"algo_id", c.lt.algo_id},   {"tile", c.lt.tile},         {"stages", c.lt.stages},
                 {"splitk", c.lt.splitk},     {"reduction", c.lt.reduction}, {"swizzle", c.lt.swizzle},
                 {"custom", c.lt.custom},     {"cluster_shape", c.lt.cluster_shape},
                 {"inner_shape", c.lt.inner_shape}};
    j["heuristic_rank"] = c.heuristic_rank;
    j["epilogue_kernel"] = c.lt_epilogue_kernel;
    if (c.lt_padded) j["padded"] = true;
    if (c.lt_bias_in_gemm) j["bias_in_gemm"] = true;
  }
}

void from_json(const nlohmann::json& j, Candidate& c) {
  if (!j.is_object() || !j.contains("id") || !j["id"].is_string())
    throw InputError("candidate object has no string field 'id'");
  c = Candidate::parse_id(j["id"].get<std::string>());
  if (j.contains("heuristic_rank") && j["heuristic_rank"].is_number_integer())
    c.heuristic_rank = j["heuristic_rank"].get<int>();
}

}  // namespace gemmtune
