#pragma once

#include "left/a.hpp"
