#include "problem/device_key.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "problem/measurement.hpp"

namespace gemmtune {
namespace {

constexpr const char* kH100 = "NVIDIA H100 80GB HBM3|sm_90|132sm|drv580.159.04|lt130100";

DeviceIdentity identity(const std::string& name, int major, int minor, int sms, const std::string& driver,
                        std::size_t lt) {
  DeviceIdentity d;
  d.gpu_name = name;
  d.cc_major = major;
  d.cc_minor = minor;
  d.sm_count = sms;
  d.driver = driver;
  d.cublaslt_version = lt;
  return d;
}

// The message of the InputError parse_device_key throws for key; "" when it accepts the key.
std::string refusal(const std::string& key) {
  try {
    parse_device_key(key);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(DeviceKey, TheBuilderSpellsTheFieldsInOrder) {
  EXPECT_EQ(identity("NVIDIA H100 80GB HBM3", 9, 0, 132, "580.159.04", 130100).key(), kH100);
  EXPECT_EQ(format_device_key(identity("NVIDIA B200", 10, 0, 148, "unknown", 130200)),
            "NVIDIA B200|sm_100|148sm|drvunknown|lt130200");
}

TEST(DeviceKey, KeysTheBuilderWritesParseBackToTheirIdentity) {
  const std::vector<DeviceIdentity> machines = {
      identity("NVIDIA H100 80GB HBM3", 9, 0, 132, "580.159.04", 130100),
      identity("NVIDIA H200", 9, 0, 132, "580.159.04", 130100),
      identity("NVIDIA A100-SXM4-80GB", 8, 0, 108, "535.54.03", 120205),
      identity("NVIDIA GeForce RTX 4090", 8, 9, 128, "550.90", 120400),
      identity("NVIDIA B200", 10, 0, 148, kUnknownDriver, 130200),
      identity("NVIDIA RTX PRO 6000 Blackwell (sm_120) 'x' \"y\"; --", 12, 0, 188, "575.57.08", 130000),
      identity(std::string(kMaxGpuNameBytes, 'N'), 9, 0, 1, "1.0", 1),
  };
  for (const DeviceIdentity& d : machines) {
    const std::string key = d.key();
    SCOPED_TRACE(key);
    const DeviceIdentity back = parse_device_key(key);
    EXPECT_EQ(back.gpu_name, d.gpu_name);
    EXPECT_EQ(back.cc_major, d.cc_major);
    EXPECT_EQ(back.cc_minor, d.cc_minor);
    EXPECT_EQ(back.sm_count, d.sm_count);
    EXPECT_EQ(back.driver, d.driver);
    EXPECT_EQ(back.cublaslt_version, d.cublaslt_version);
    EXPECT_EQ(back.key(), key);
  }
}

TEST(DeviceKey, KeysGemmtuneCouldNotHaveWrittenAreRefusedWithTheReason) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"lt/a-1", "5 fields separated by '|'), got 1"},  // a candidate id where a device key belongs
      {"", "got 1"},
      {"NVIDIA H100 80GB HBM3:sm_90|132sm|drv580.159.04|lt130100", "got 4"},  // a separator replaced
      {std::string(kH100) + "|x", "got 6"},
      {"|sm_90|132sm|drv580.159.04|lt130100", "the GPU name is empty"},
      {"NVIDIA H100\x01 80GB HBM3|sm_90|132sm|drv580.159.04|lt130100", "not printable ASCII"},
      {"NVIDIA H100 80GB HBM\xc3\xa9|sm_90|132sm|drv580.159.04|lt130100", "not printable ASCII"},
      {std::string(kMaxGpuNameBytes + 1, 'N') + "|sm_90|132sm|drv580.159.04|lt130100", "longer than a driver's"},
      {"NVIDIA H100 80GB HBM3|sm_9O|132sm|drv580.159.04|lt130100", "'sm_9O' is not sm_<major><minor>"},
      {"NVIDIA H100 80GB HBM3|sm_9|132sm|drv580.159.04|lt130100", "'sm_9' is not"},
      {"NVIDIA H100 80GB HBM3|sm_090|132sm|drv580.159.04|lt130100", "'sm_090' is not"},
      {"NVIDIA H100 80GB HBM3|cc_90|132sm|drv580.159.04|lt130100", "'cc_90' is not"},
      {"Tesla T4|sm_75|40sm|drv580.159.04|lt130100", "compute capability 7.5 is below 8.0"},
      {"NVIDIA H100 80GB HBM3|sm_90|0132sm|drv580.159.04|lt130100", "'0132sm' is not <SM count>sm"},
      {"NVIDIA H100 80GB HBM3|sm_90|0sm|drv580.159.04|lt130100", "'0sm' is not"},
      {"NVIDIA H100 80GB HBM3|sm_90|+132sm|drv580.159.04|lt130100", "'+132sm' is not"},
      {"NVIDIA H100 80GB HBM3|sm_90|132SM|drv580.159.04|lt130100", "'132SM' is not"},
      {"NVIDIA H100 80GB HBM3|sm_90|99999999999sm|drv580.159.04|lt130100", "'99999999999sm' is not"},
      {"NVIDIA H100 80GB HBM3|sm_90|132sm|drv580|lt130100", "'drv580' is not drv<driver version>"},
      {"NVIDIA H100 80GB HBM3|sm_90|132sm|drv580..04|lt130100", "'drv580..04' is not"},
      {"NVIDIA H100 80GB HBM3|sm_90|132sm|drv580.159.04.1|lt130100", "'drv580.159.04.1' is not"},
      {"NVIDIA H100 80GB HBM3|sm_90|132sm|drvlatest|lt130100", "'drvlatest' is not"},
      {"NVIDIA H100 80GB HBM3|sm_90|132sm|580.159.04|lt130100", "'580.159.04' is not"},
      {"NVIDIA H100 80GB HBM3|sm_90|132sm|drv580.159.04|lt0130100", "'lt0130100' is not lt<cuBLASLt version>"},
      {"NVIDIA H100 80GB HBM3|sm_90|132sm|drv580.159.04|lt13010O", "'lt13010O' is not"},
      {"NVIDIA H100 80GB HBM3|sm_90|132sm|drv580.159.04|lt0", "'lt0' is not"},
      {"NVIDIA H100 80GB HBM3|sm_90|132sm|drv580.159.04|lt", "'lt' is not"},
      {"NVIDIA H100 80GB HBM3|sm_90|132sm|drv580.159.04|lt99999999999999999999999", "is not"},
  };
  for (const auto& [key, why] : bad) {
    const std::string message = refusal(key);
    EXPECT_NE(message.find(why), std::string::npos) << key << ": " << (message.empty() ? "accepted" : message);
    EXPECT_EQ(message.rfind("device key '", 0), 0u) << message;
  }
}

TEST(DeviceKey, TheMessageIsOneLineAndShowsUnprintableBytesEscaped) {
  const std::string message = refusal("NVIDIA\nH100|sm_90|132sm|drv580.159.04|lt130100\x7f");
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_NE(message.find("NVIDIA\\x0aH100"), std::string::npos) << message;
  EXPECT_NE(message.find("lt130100\\x7f"), std::string::npos) << message;
}

// Every byte of a real key replaced by every other byte: the parser accepts the result only where it is itself a key
// the builder writes (a letter in the GPU name, a digit for a digit: another machine's key, which no format can tell
// from this one's); everything else is refused. Outside the GPU name only a digit can replace a byte unseen: for a
// digit, or for a dot of the driver version (580.159.04 -> 5809159.04 is a two-number version).
TEST(DeviceKey, AReplacedByteIsRefusedUnlessItSpellsAnotherWellFormedKey) {
  const std::string key = kH100;
  const std::size_t name_end = key.find('|');
  int accepted_outside_name = 0, refused = 0;
  for (std::size_t i = 0; i < key.size(); ++i) {
    for (int b = 0; b < 256; ++b) {
      if (static_cast<char>(b) == key[i]) continue;
      std::string mutated = key;
      mutated[i] = static_cast<char>(b);
      if (!refusal(mutated).empty()) {
        ++refused;
        continue;
      }
      EXPECT_EQ(parse_device_key(mutated).key(), mutated);  // accepted means it round-trips
      if (i > name_end) {
        ++accepted_outside_name;
        EXPECT_TRUE(b >= '0' && b <= '9' && ((key[i] >= '0' && key[i] <= '9') || key[i] == '.'))
            << "byte " << i << " of '" << key << "' replaced by " << b << " was accepted";
      }
    }
  }
  EXPECT_GT(refused, 0);
  EXPECT_GT(accepted_outside_name, 0);  // e.g. drv580.159.05: a real driver version too
}

TEST(DeviceKey, DriverVersionsAreTwoOrThreeDottedNumbers) {
  for (const char* ok : {"580.159.04", "535.54.03", "550.90", "1.0"}) EXPECT_TRUE(is_driver_version(ok)) << ok;
  for (const char* bad : {"", "580", "580.", ".580", "580..04", "580.159.04.1", "580.159.O4", "v580.159"})
    EXPECT_FALSE(is_driver_version(bad)) << bad;
}

}  // namespace
}  // namespace gemmtune
