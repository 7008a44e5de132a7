// A folder that includes one that includes it back: check_folder_deps.py must report the pair.
#pragma once

#include "right/b.hpp"
