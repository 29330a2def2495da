#pragma once
// The trained models that ship with ufno (models/sg_ufno.h5 and models/dp_ufno.h5), used when a
// run names no --model. They are looked up in $UFNO_MODEL_DIR when it is set (only there), else in
// share/ufno/models next to the installed executable, and in the source tree the executable was
// built from, so the defaults work from a build tree, an install and a relocated install alike.
#include <string>
#include <vector>

namespace ufno {

// File names of the default SG and dP models inside a model directory.
const std::vector<std::string>& default_model_names();

// Directories searched for the default models, in order (existing or not).
std::vector<std::string> default_model_dirs();

// The default SG and dP model paths from the first directory that holds both; throws
// InputError naming the directories searched when none does.
std::vector<std::string> default_models();

}  // namespace ufno
