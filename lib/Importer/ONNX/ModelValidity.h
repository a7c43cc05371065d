//===- ModelValidity.h - The ONNX checker's rules at import -----*- C++ -*-===//
//
// A model that breaks one of the ONNX checker's rules has no defined meaning:
// which of two nodes writing one name wins, what an opset nobody has
// published means. Other runtimes (onnxruntime) refuse such models; Loom
// must too, rather than pick one reading and give an answer. These checks
// run on the model as read, before function expansion and shape inference,
// and each error names the node or graph and the rule it breaks.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_IMPORTER_ONNX_MODELVALIDITY_H
#define LOOM_LIB_IMPORTER_ONNX_MODELVALIDITY_H

#include "onnx/onnx_pb.h"

#include <cstdint>
#include <string>

namespace loom::onnx_import {

/// The IR versions Loom reads: opset imports start at IR 3, and 14 is the
/// newest IR of the newest ONNX release Loom is tested against (onnx 1.23.2,
/// which writes the newer node suite), as onnxruntime 1.32 also accepts.
constexpr int64_t kOldestIRVersion = 3;
constexpr int64_t kNewestIRVersion = 14;

/// The newest opset of `domain` ("" and "ai.onnx" are one domain) the linked
/// ONNX library has schemas for (Debian's libonnx: 17 for the default
/// domain), or -1 for a domain it does not know.
int64_t newestLibraryOpset(const std::string &domain);

/// The newest opset of `domain` ("" and "ai.onnx" are one domain) that Loom
/// accepts, or -1 for a domain it has no range for (custom domains: their
/// ops fail later as unsupported, whatever the version).
int64_t newestSupportedOpset(const std::string &domain);

/// Checks the ONNX checker's rules that matter for safety and meaning: the
/// IR version and opset ranges, single definition of every name across
/// subgraph scopes, topological order, references to outer scopes, and the
/// attributes and arity of ops against their schemas. Returns an empty
/// string when the model is valid, else the first violation found. Expects
/// a model that passed checkModelBounds (subgraph depth is bounded).
std::string checkModelValidity(const onnx::ModelProto &model);

} // namespace loom::onnx_import

#endif // LOOM_LIB_IMPORTER_ONNX_MODELVALIDITY_H
