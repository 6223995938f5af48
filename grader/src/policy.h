/**
 * @file policy.h
 * @brief The integrity policy of student files: the system and kit functions a kernel file
 * may not use or define and the global names it may define besides the lab's contract
 * (checked on its compiled object), and the identifiers a lab's rubric forbids in its source
 * (`forbid-source`: what the lab asks students to write themselves).
 *
 * Both are early, friendly messages; the sandbox (jail.h) is what stops a hostile submission.
 */
#ifndef GRADER_POLICY_H
#define GRADER_POLICY_H

#include <stddef.h>

#include "rubric.h"

/**
 * Why @p symbol (from `nm`, e.g. "fopen@GLIBC_2.2.5") may not appear in a student object of
 * @p lab (NULL: the grader's own list only), or NULL when it may.
 */
const char *gr_forbidden_symbol(const gr_lab_rubric *lab, const char *symbol);

/** @p symbol without its version ("fopen@GLIBC_2.2.5" -> "fopen"). */
void gr_symbol_base(const char *symbol, char *out, size_t size);

/**
 * Is @p symbol, a global definition in a student object, one the compilers emit for any
 * file (the C++ personality reference, nvcc's fat binary wrapper and host references)?
 */
int gr_compiler_symbol(const char *symbol);

/**
 * Why a global definition of the mangled C++ name @p symbol (@p weak: nm type W, V or u)
 * would replace the C++ library's or runtime's own code, or NULL: the global operator new
 * and delete, and anything in namespace std, __gnu_cxx or __cxxabiv1 but a weak template
 * instantiation (std::vector<double>'s members, which the library's headers emit). The
 * phrase follows "defines NAME, which".
 */
const char *gr_library_definition(const char *symbol, int weak);

/**
 * Does @p src hold a line directive (`#line N "file"` or `# N "file"`, after splices and
 * comments)? It would make the preprocessor attribute the student's lines to another file,
 * out of reach of the source rules. 1 with its line in @p line, else 0.
 */
int gr_line_directive(const char *src, int *line);

/**
 * Does @p src name one of @p lab's `forbid-source` identifiers (as a whole token, outside
 * comments and literals)? 1 with the first one in @p found and its line in @p line, else 0.
 */
int gr_forbidden_identifier(const gr_lab_rubric *lab, const char *src, char *found,
                            size_t size, int *line);

#endif
