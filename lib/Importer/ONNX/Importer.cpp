//===- Importer.cpp - ONNX to loom importer entry points ------------------===//

#include "loom/Importer/ONNX/Importer.h"

#include "GraphImporter.h"
#include "ModelLoader.h"
#include "ModelValidity.h"
#include "OpTable.h"

#include "loom/Dialect/Loom/IR/LoomDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

namespace loom {

OwningOpRef<ModuleOp> importONNXModelBuffer(llvm::StringRef buffer,
                                            llvm::StringRef displayName,
                                            llvm::StringRef baseDirectory,
                                            MLIRContext *context,
                                            const ONNXImportOptions &options) {
  context->loadDialect<LoomDialect, func::FuncDialect, tensor::TensorDialect>();
  Location fileLoc = FileLineColLoc::get(context, displayName, 0, 0);
  auto fail = [&](const std::string &message) -> OwningOpRef<ModuleOp> {
    emitError(fileLoc) << message;
    return nullptr;
  };

  onnx::ModelProto model;
  if (std::string e = onnx_import::parseModel(buffer.str(), model, options);
      !e.empty())
    return fail(e);
  if (std::string e = onnx_import::checkModelBounds(model, options); !e.empty())
    return fail(e);
  if (std::string e = onnx_import::checkModelValidity(model); !e.empty())
    return fail(e);
  // The size of the model as exported, before function expansion: the
  // figure kernel counts are compared with.
  int64_t exportedNodes = model.graph().node_size();
  auto hasBuilder = [](const onnx::NodeProto &node, int64_t version) {
    return onnx_import::OpTable::get().lookup(node.domain(), node.op_type(),
                                              version) != nullptr;
  };
  if (std::string e = onnx_import::prepareModel(model, hasBuilder, options);
      !e.empty())
    return fail(e);

  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  onnx_import::GraphImporter importer(*module, model, displayName.str(),
                                      baseDirectory.str(), options);
  if (failed(importer.importMainGraph()))
    return nullptr;
  if (auto func = module->lookupSymbol<func::FuncOp>(options.functionName))
    func->setAttr(
        "onnx.node_count",
        IntegerAttr::get(IntegerType::get(context, 64), exportedNodes));
  if (failed(verify(*module))) {
    emitError(fileLoc) << "the imported program does not verify";
    return nullptr;
  }
  return module;
}

OwningOpRef<ModuleOp> importONNXModelFile(llvm::StringRef path,
                                          MLIRContext *context,
                                          const ONNXImportOptions &options) {
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!file) {
    emitError(FileLineColLoc::get(context, path, 0, 0))
        << "cannot read the model: " << file.getError().message();
    return nullptr;
  }
  llvm::SmallString<256> directory(path);
  llvm::sys::path::remove_filename(directory);
  if (directory.empty())
    directory = ".";
  return importONNXModelBuffer((*file)->getBuffer(), path, directory, context,
                               options);
}

std::string
parseInputShape(llvm::StringRef spec,
                std::map<std::string, std::vector<int64_t>> &shapes) {
  auto [name, sizes] = spec.rsplit('=');
  if (name.empty() || sizes.empty() || name == spec)
    return "expects NAME=D0xD1x... (e.g. input_ids=2x64), got '" + spec.str() +
           "'";
  std::vector<int64_t> dims;
  llvm::SmallVector<llvm::StringRef> pieces;
  // A scalar input is spelled NAME=scalar.
  if (sizes != "scalar")
    sizes.split(pieces, 'x');
  for (llvm::StringRef piece : pieces) {
    int64_t size = 0;
    if (piece.getAsInteger(10, size) || size < 0)
      return "'" + spec.str() + "': '" + piece.str() + "' is not a size";
    dims.push_back(size);
  }
  if (!shapes.emplace(name.str(), std::move(dims)).second)
    return "gives input '" + name.str() + "' twice";
  return "";
}

namespace {
/// Command-line bounds of `--import-onnx` (defaults: ONNXImportOptions).
struct ImportONNXCommandLine {
  ONNXImportOptions defaults;
  llvm::cl::opt<unsigned long long> maxModelBytes{
      "onnx-max-model-bytes",
      llvm::cl::desc("Largest ONNX model file accepted, in bytes"),
      llvm::cl::init(defaults.maxModelBytes)};
  llvm::cl::opt<long long> maxNodes{
      "onnx-max-nodes", llvm::cl::desc("Most nodes accepted in the main graph"),
      llvm::cl::init(defaults.maxNodes)};
  llvm::cl::opt<long long> maxRank{
      "onnx-max-rank", llvm::cl::desc("Highest tensor rank accepted"),
      llvm::cl::init(defaults.maxRank)};
  llvm::cl::opt<long long> maxSubgraphDepth{
      "onnx-max-subgraph-depth",
      llvm::cl::desc("Deepest nesting of subgraphs accepted"),
      llvm::cl::init(defaults.maxSubgraphDepth)};
  llvm::cl::opt<long long> maxInlineElements{
      "onnx-max-inline-elements",
      llvm::cl::desc("Constants with more elements become resource blobs"),
      llvm::cl::init(defaults.maxInlineElements)};

  llvm::cl::list<std::string> inputShapes{
      "input-shape", llvm::cl::desc("Bind a graph input's symbolic dimensions: "
                                    "NAME=D0xD1x... (repeatable)")};

  /// The options; `error` says what is wrong with a malformed flag.
  ONNXImportOptions options(std::string &error) const {
    ONNXImportOptions o;
    for (const std::string &spec : inputShapes)
      if (error.empty())
        if (std::string why = parseInputShape(spec, o.inputShapes);
            !why.empty())
          error = "--input-shape " + why;
    o.maxModelBytes = maxModelBytes;
    o.maxNodes = maxNodes;
    o.maxRank = maxRank;
    o.maxSubgraphDepth = maxSubgraphDepth;
    o.maxInlineElements = maxInlineElements;
    return o;
  }
};
} // namespace

void registerImportONNXTranslation() {
  static ImportONNXCommandLine commandLine;
  static TranslateToMLIRRegistration registration(
      "import-onnx", "Import an ONNX model (binary or text) into loom IR",
      [](llvm::SourceMgr &sourceMgr,
         MLIRContext *context) -> OwningOpRef<Operation *> {
        const llvm::MemoryBuffer *buffer =
            sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
        llvm::StringRef name = buffer->getBufferIdentifier();
        llvm::SmallString<256> directory(name);
        llvm::sys::path::remove_filename(directory);
        if (directory.empty())
          directory = ".";
        // Reading standard input leaves no directory to anchor external data.
        if (name == "<stdin>")
          directory.clear();
        std::string error;
        ONNXImportOptions options = commandLine.options(error);
        if (!error.empty()) {
          emitError(FileLineColLoc::get(context, name, 0, 0)) << error;
          return nullptr;
        }
        return importONNXModelBuffer(buffer->getBuffer(), name, directory,
                                     context, options);
      },
      [](DialectRegistry &registry) {
        registry
            .insert<LoomDialect, func::FuncDialect, tensor::TensorDialect>();
      });
}

} // namespace loom
