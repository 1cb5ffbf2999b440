//===- GeneratedCode.h - What every pass's generated code carries -*- C++
//-*-===//
//
// Two things every rewritten file carries whatever pass wrote it: a marker
// line that says the file is cuda-rewrite's output (a second run over it
// changes nothing), and, beside each piece of generated code, the values it
// was made for (ConfigPins), as static_asserts.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_REWRITERS_COMMON_GENERATEDCODE_H
#define CUDA_REWRITE_REWRITERS_COMMON_GENERATEDCODE_H

#include "analysis/ConfigPins.h"
#include "analysis/LaunchSites.h"
#include "clang/Basic/SourceLocation.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include <optional>
#include <string>

namespace cuda_rewrite {

/// The comment line cuda-rewrite puts before the first declaration of every
/// file it rewrote.
llvm::StringRef rewrittenFileMarker();

/// The 1-based line of \p FileText holding the marker, if it has one.
std::optional<unsigned> findRewrittenFileMarker(llvm::StringRef FileText);

/// The static_asserts of \p Pins under a comment saying why, and a blank
/// line; empty when nothing is pinned.
std::string pinnedValues(const ConfigPins &Pins);

/// Where the pins of values read from \p Kernel's launches go: the line after
/// the last of its definition and the main file's functions that launch it,
/// so that every macro those launches spell is defined there (one defined
/// between the kernel and its host launch would not be at the kernel).
clang::SourceLocation pinPlaceAfterLaunches(const clang::ASTContext &Ctx,
                                            llvm::ArrayRef<LaunchSite> Launches,
                                            const clang::FunctionDecl &Kernel);

} // namespace cuda_rewrite

#endif
