//===- TensorIO.cpp - Reading and writing tensors for loom-run ------------===//

#include "loom/TensorIO/TensorIO.h"

#include "loom/Importer/ONNX/TensorProtoReader.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>
#include <tuple>

using namespace loom::reference;

namespace loom {
namespace {

struct NpyType {
  const char *descr;
  ElementKind kind;
};

// NumPy type strings ('<' little-endian, '|' byte-sized).
const NpyType kNpyTypes[] = {
    {"<f2", ElementKind::F16}, {"<f4", ElementKind::F32},
    {"<f8", ElementKind::F64}, {"|b1", ElementKind::I1},
    {"|i1", ElementKind::I8},  {"<i2", ElementKind::I16},
    {"<i4", ElementKind::I32}, {"<i8", ElementKind::I64},
    {"|u1", ElementKind::U8},  {"<u2", ElementKind::U16},
    {"<u4", ElementKind::U32}, {"<u8", ElementKind::U64},
};

/// The value of `'key': value` in a .npy header dictionary.
std::optional<llvm::StringRef> headerField(llvm::StringRef header,
                                           llvm::StringRef key) {
  size_t at = header.find(("'" + key + "'").str());
  if (at == llvm::StringRef::npos)
    return std::nullopt;
  llvm::StringRef rest = header.drop_front(at + key.size() + 2).ltrim(" :");
  if (rest.starts_with("(")) {
    size_t end = rest.find(')');
    return end == llvm::StringRef::npos
               ? std::nullopt
               : std::optional(rest.take_front(end + 1));
  }
  size_t end = rest.find_first_of(",}");
  return rest.take_front(end).trim();
}

std::string readNpy(llvm::StringRef data, llvm::StringRef path,
                    Tensor &tensor) {
  if (data.size() < 10 || !data.starts_with("\x93NUMPY"))
    return "'" + path.str() + "' is not a .npy file";
  unsigned major = static_cast<unsigned char>(data[6]);
  size_t headerLength, offset;
  if (major == 1) {
    headerLength = static_cast<unsigned char>(data[8]) |
                   (static_cast<unsigned char>(data[9]) << 8);
    offset = 10;
  } else {
    if (data.size() < 12)
      return "'" + path.str() + "' is truncated";
    headerLength = static_cast<unsigned char>(data[8]) |
                   (static_cast<unsigned char>(data[9]) << 8) |
                   (static_cast<unsigned char>(data[10]) << 16) |
                   (size_t(static_cast<unsigned char>(data[11])) << 24);
    offset = 12;
  }
  if (offset + headerLength > data.size())
    return "'" + path.str() + "' is truncated";
  llvm::StringRef header = data.substr(offset, headerLength);
  auto descr = headerField(header, "descr");
  auto fortran = headerField(header, "fortran_order");
  auto shapeText = headerField(header, "shape");
  if (!descr || !fortran || !shapeText)
    return "'" + path.str() + "' has a malformed header";
  if (*fortran != "False")
    return "'" + path.str() + "' is in Fortran order, which is not supported";
  std::optional<ElementKind> kind;
  for (const NpyType &t : kNpyTypes)
    if (descr->trim("'\"") == t.descr)
      kind = t.kind;
  if (!kind)
    return "'" + path.str() + "' has unsupported dtype " + descr->str();
  llvm::SmallVector<int64_t> shape;
  llvm::SmallVector<llvm::StringRef> parts;
  shapeText->trim("()").split(parts, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef p : parts) {
    int64_t d;
    if (p.trim().getAsInteger(10, d) || d < 0)
      return "'" + path.str() + "' has a malformed shape";
    shape.push_back(d);
  }
  llvm::StringRef payload = data.drop_front(offset + headerLength);
  std::optional<Tensor> t = tensorFromBytes(
      *kind, shape, llvm::ArrayRef<char>(payload.data(), payload.size()));
  if (!t)
    return "'" + path.str() + "' holds " + std::to_string(payload.size()) +
           " bytes of data, which does not match its shape";
  tensor = std::move(*t);
  return "";
}

} // namespace

std::string readTensorFile(llvm::StringRef path, mlir::MLIRContext *ctx,
                           Tensor &tensor) {
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!file)
    return "cannot read '" + path.str() + "': " + file.getError().message();
  TensorFileFormat format = path.ends_with(".npy")
                                ? TensorFileFormat::Npy
                                : TensorFileFormat::ONNXTensorProto;
  return readTensorBuffer((*file)->getBuffer(), format, path, ctx, tensor);
}

std::string readTensorBuffer(llvm::StringRef buffer, TensorFileFormat format,
                             llvm::StringRef displayName,
                             mlir::MLIRContext *ctx, Tensor &tensor) {
  if (format == TensorFileFormat::Npy)
    return readNpy(buffer, displayName, tensor);
  ONNXTensorData data;
  if (std::string error = readONNXTensorBuffer(buffer, displayName, ctx, data);
      !error.empty())
    return error;
  std::optional<ElementKind> kind = getElementKind(data.type.getElementType());
  std::optional<Tensor> t =
      kind ? tensorFromBytes(*kind, data.type.getShape(), data.bytes)
           : std::nullopt;
  if (!t)
    return "'" + displayName.str() + "' holds an unsupported tensor";
  tensor = std::move(*t);
  return "";
}

std::string writeNpyFile(llvm::StringRef path, const Tensor &tensor) {
  // numpy has no bf16 or fp8: their values, exactly, as f32.
  Tensor out = tensor.kind() == ElementKind::BF16 ||
                       tensor.kind() == ElementKind::F8E4M3FN
                   ? castTensor(tensor, ElementKind::F32)
                   : tensor;
  const char *descr = nullptr;
  for (const NpyType &t : kNpyTypes)
    if (t.kind == out.kind())
      descr = t.descr;
  if (!descr)
    return "cannot write '" + path.str() + "': no .npy type for " +
           out.typeString();
  std::string shape;
  for (int64_t d : out.shape())
    shape += (shape.empty() ? "" : ", ") + std::to_string(d);
  shape = "(" + shape + (out.rank() == 1 ? ",)" : ")");
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad so that the data starts on a 64-byte boundary, ending in '\n'.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return "cannot write '" + path.str() + "': " + ec.message();
  os << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xff)
     << char(header.size() >> 8) << header;
  std::vector<char> bytes = tensorToBytes(out);
  os.write(bytes.data(), bytes.size());
  return "";
}

std::string listTensorFiles(llvm::StringRef directory, llvm::StringRef prefix,
                            std::vector<std::string> &files) {
  std::error_code ec;
  std::map<int64_t, std::string> numbered;
  std::vector<std::string> npy;
  for (llvm::sys::fs::directory_iterator it(directory, ec), end;
       it != end && !ec; it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    int64_t index;
    if (name.starts_with(prefix) && name.ends_with(".pb") &&
        !name.drop_front(prefix.size()).drop_back(3).getAsInteger(10, index))
      numbered[index] = it->path();
    else if (name.ends_with(".npy"))
      npy.push_back(it->path());
  }
  if (ec)
    return "cannot list '" + directory.str() + "': " + ec.message();
  files.clear();
  for (auto &[index, path] : numbered)
    files.push_back(path);
  if (files.empty()) {
    // Numbered names in numeric order (output_2.npy before output_10.npy),
    // the rest by name.
    auto key = [](const std::string &path) {
      llvm::StringRef stem = llvm::sys::path::stem(path);
      size_t digits = stem.size();
      while (digits > 0 && llvm::isDigit(stem[digits - 1]))
        --digits;
      int64_t number = -1;
      if (digits < stem.size())
        stem.drop_front(digits).getAsInteger(10, number);
      return std::make_tuple(stem.take_front(digits).str(), number, path);
    };
    std::sort(npy.begin(), npy.end(),
              [&](const std::string &a, const std::string &b) {
                return key(a) < key(b);
              });
    files = npy;
  }
  return "";
}

} // namespace loom
