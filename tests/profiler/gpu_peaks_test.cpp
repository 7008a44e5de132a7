#include "profiler/gpu_peaks.hpp"

#include <gtest/gtest.h>

namespace gemmtune {
namespace {

TEST(GpuPeaks, TheTeamsH100IsTheSxmPart) {
  const auto p = nominal_peaks("NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->model, "H100 SXM5");
  EXPECT_DOUBLE_EQ(p->tflops(MathMode::Fp32), 67.0);
  EXPECT_DOUBLE_EQ(p->tflops(MathMode::Tf32), 495.0);
  EXPECT_DOUBLE_EQ(p->dram_tbytes_per_s, 3.35);
}

TEST(GpuPeaks, ThreeTf32ProductsPerOutputMeanAThirdOfTheTf32Ceiling) {
  EXPECT_DOUBLE_EQ(nominal_peaks("NVIDIA H100 80GB HBM3")->tflops(MathMode::Tf32x3), 165.0);
}

TEST(GpuPeaks, MoreSpecificNamesWinOverTheirPrefixes) {
  EXPECT_EQ(nominal_peaks("NVIDIA H100 PCIe")->model, "H100 PCIe");
  EXPECT_EQ(nominal_peaks("NVIDIA L40S")->model, "L40S");
  EXPECT_EQ(nominal_peaks("NVIDIA L4")->model, "L4");
  EXPECT_EQ(nominal_peaks("NVIDIA A100-SXM4-80GB")->model, "A100 80GB SXM4");
  EXPECT_EQ(nominal_peaks("NVIDIA A100-PCIE-40GB")->model, "A100 40GB");
}

TEST(GpuPeaks, UnknownGpuHasNoPeaks) { EXPECT_FALSE(nominal_peaks("NVIDIA Test GPU").has_value()); }

TEST(GpuPeaks, DeviceKeyStartsWithTheGpuName) {
  EXPECT_EQ(gpu_name_of_device_key("NVIDIA H100 80GB HBM3|sm_90|132sm|drv580.159.04|lt130100"),
            "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(gpu_name_of_device_key("bare"), "bare");
}

}  // namespace
}  // namespace gemmtune
