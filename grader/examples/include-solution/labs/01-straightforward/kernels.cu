// Example submission "include-solution": tries to pass off the instructor's solution by
// including it through the kit's include path (-I common/include and -I labs/01-...).
// The grader lists every #include dependency with the lab's own flags and refuses files from
// outside the CUDA toolkit, the system headers, common/include/labkit, common/models and the lab's folder.

#include "../../solutions/01-straightforward/kernels.cu"
