#include "common/json_fields.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "common/error.hpp"

namespace gemmtune {

JsonFields::JsonFields(const nlohmann::json& value, std::string source, std::string path)
    : value_(value), source_(std::move(source)), path_(std::move(path)) {
  if (!value_.is_object())
    throw InputError(source_ + ": " + (path_.empty() ? "document" : path_) + ": expected an object, got " +
                     value_.type_name());
}

std::string JsonFields::path_of(const std::string& name) const { return path_.empty() ? name : path_ + "." + name; }

void JsonFields::fail(const std::string& name, const std::string& why) const {
  throw InputError(source_ + ": " + path_of(name) + ": " + why);
}

const nlohmann::json& JsonFields::at(const std::string& name) const {
  const auto it = value_.find(name);
  if (it == value_.end()) fail(name, "missing");
  return *it;
}

std::string JsonFields::string(const std::string& name) const {
  const nlohmann::json& v = at(name);
  if (!v.is_string()) fail(name, std::string("expected a string, got ") + v.type_name());
  return v.get<std::string>();
}

double JsonFields::number(const std::string& name) const {
  const nlohmann::json& v = at(name);
  if (!v.is_number()) fail(name, std::string("expected a number, got ") + v.type_name());
  const double d = v.get<double>();
  if (!std::isfinite(d)) fail(name, "expected a finite number");
  return d;
}

std::int64_t JsonFields::integer(const std::string& name) const {
  const nlohmann::json& v = at(name);
  if (!v.is_number_integer()) fail(name, std::string("expected an integer, got ") + v.type_name());
  return v.get<std::int64_t>();
}

bool JsonFields::boolean(const std::string& name) const {
  const nlohmann::json& v = at(name);
  if (!v.is_boolean()) fail(name, std::string("expected true or false, got ") + v.type_name());
  return v.get<bool>();
}

bool JsonFields::has(const std::string& name) const { return value_.contains(name); }

JsonFields JsonFields::object(const std::string& name) const { return JsonFields(at(name), source_, path_of(name)); }

std::vector<JsonFields> JsonFields::objects(const std::string& name) const {
  const nlohmann::json& v = at(name);
  if (!v.is_array()) fail(name, std::string("expected an array, got ") + v.type_name());
  std::vector<JsonFields> out;
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    out.emplace_back(v[i], source_, path_of(name) + "[" + std::to_string(i) + "]");
  return out;
}

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError("cannot read " + path);
  return parse_json_text(text.str(), path);
}

nlohmann::json parse_json_text(const std::string& text, const std::string& source) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(source + ": not valid JSON (" + e.what() + ")");
  }
}

void write_json_file(const std::string& path, const nlohmann::json& j) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError("cannot write " + tmp);
    out << j.dump(2) << "\n";
    out.close();
    if (!out) throw InputError("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw InputError("cannot write " + path);
  }
}

}  // namespace gemmtune
