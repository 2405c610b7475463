# Read at llama.cpp's project() call when .ci/run builds llama-cpp-python
# (-DCMAKE_PROJECT_llama.cpp_INCLUDE=this file). llama-cpp-python forces llama.cpp's "common"
# library on (a cache entry), though its Python package loads only libllama and the ggml
# libraries; this normal variable shadows that entry, so the common library, about a third of the
# build, is not compiled.
set(LLAMA_BUILD_COMMON OFF)
