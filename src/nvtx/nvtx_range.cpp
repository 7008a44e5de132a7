#include "nvtx/nvtx_range.hpp"

#include <nvtx3/nvToolsExt.h>

namespace gemmtune {
namespace {

// One handle per process: nvtxDomainCreateA is not free, and a domain lives until the process ends.
nvtxDomainHandle_t gemmtune_domain() {
  static const nvtxDomainHandle_t domain = nvtxDomainCreateA(kNvtxDomain);
  return domain;
}

}  // namespace

NvtxRange::NvtxRange(const std::string& name) {
  nvtxEventAttributes_t attributes{};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attributes.message.ascii = name.c_str();  // the tool copies the text during the call
  nvtxDomainRangePushEx(gemmtune_domain(), &attributes);
}

NvtxRange::~NvtxRange() { nvtxDomainRangePop(gemmtune_domain()); }

}  // namespace gemmtune
