//===- Npy.cpp - .npy files for loom-exec ---------------------------------===//
//
// The tensor files of the runtime-only runner: see Npy.h.
//
//===----------------------------------------------------------------------===//

#include "Npy.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

namespace loom::exec {
namespace {

struct NpyType {
  loom_dtype dtype;
  const char *code; // The type string without its byte-order character.
};

// bf16 has no numpy dtype: see readNpy's callers and writeNpy.
const NpyType kNpyTypes[] = {
    {LOOM_DTYPE_F16, "f2"},  {LOOM_DTYPE_F32, "f4"}, {LOOM_DTYPE_F64, "f8"},
    {LOOM_DTYPE_BOOL, "b1"}, {LOOM_DTYPE_I8, "i1"},  {LOOM_DTYPE_I16, "i2"},
    {LOOM_DTYPE_I32, "i4"},  {LOOM_DTYPE_I64, "i8"}, {LOOM_DTYPE_U8, "u1"},
    {LOOM_DTYPE_U16, "u2"},  {LOOM_DTYPE_U32, "u4"}, {LOOM_DTYPE_U64, "u8"},
};

/// The text of `'key': value` in a .npy header dictionary: a quoted string
/// without its quotes, a parenthesized tuple with them, or a bare word.
bool headerField(const std::string &header, const std::string &key,
                 std::string &value) {
  size_t at = header.find("'" + key + "'");
  if (at == std::string::npos)
    return false;
  at += key.size() + 2;
  while (at < header.size() && (header[at] == ' ' || header[at] == ':'))
    ++at;
  if (at >= header.size())
    return false;
  size_t end;
  if (header[at] == '\'' || header[at] == '"') {
    end = header.find(header[at], at + 1);
    if (end == std::string::npos)
      return false;
    value = header.substr(at + 1, end - at - 1);
    return true;
  }
  if (header[at] == '(') {
    end = header.find(')', at);
    if (end == std::string::npos)
      return false;
    value = header.substr(at, end - at + 1);
    return true;
  }
  end = header.find_first_of(",}", at);
  if (end == std::string::npos)
    return false;
  value = header.substr(at, end - at);
  while (!value.empty() && value.back() == ' ')
    value.pop_back();
  return true;
}

/// Parses "(2, 3)", "(5,)" or "()".
bool parseShape(const std::string &text, std::vector<int64_t> &shape) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')')
    return false;
  shape.clear();
  std::string inner = text.substr(1, text.size() - 2);
  size_t at = 0;
  while (at < inner.size()) {
    size_t comma = inner.find(',', at);
    std::string item = inner.substr(
        at, comma == std::string::npos ? std::string::npos : comma - at);
    size_t first = item.find_first_not_of(' ');
    size_t last = item.find_last_not_of(' ');
    bool lastItem = comma == std::string::npos;
    if (first == std::string::npos) {
      // Only the trailing comma of "(5,)" leaves an empty item.
      if (!lastItem || shape.empty())
        return false;
      break;
    }
    item = item.substr(first, last - first + 1);
    if (item.size() > 18 ||
        item.find_first_not_of("0123456789") != std::string::npos)
      return false;
    shape.push_back(std::stoll(item));
    if (lastItem)
      break;
    at = comma + 1;
  }
  return shape.size() <= LOOM_MAX_RANK;
}

} // namespace

/// "f32[2, ?, 4]": the spelling loom-run uses, '?' for symbolic sizes.
std::string typeString(loom_dtype dtype, const int64_t *dims, size_t rank) {
  std::string text = std::string(loom_dtype_name(dtype)) + "[";
  for (size_t i = 0; i < rank; ++i) {
    if (i)
      text += ", ";
    text += dims[i] == LOOM_DYNAMIC_DIM ? "?" : std::to_string(dims[i]);
  }
  return text + "]";
}

std::string typeString(const Tensor &t) {
  return typeString(t.dtype, t.shape.data(), t.shape.size());
}

std::string typeString(const loom_tensor_desc &desc) {
  return typeString(desc.dtype, desc.dims, static_cast<size_t>(desc.rank));
}

/// Elements times the dtype's size, or false when that overflows.
bool byteSize(loom_dtype dtype, const std::vector<int64_t> &shape,
              size_t &bytes) {
  uint64_t total = loom_dtype_size(dtype);
  for (int64_t d : shape) {
    if (d < 0)
      return false;
    if (d && total > std::numeric_limits<uint64_t>::max() / uint64_t(d))
      return false;
    total *= uint64_t(d);
  }
  if (total > std::numeric_limits<size_t>::max())
    return false;
  bytes = static_cast<size_t>(total);
  return true;
}

std::string parseNpy(const char *data, size_t size, const std::string &path,
                     Tensor &tensor) {
  if (size < 10 || std::memcmp(data, "\x93NUMPY", 6) != 0)
    return "'" + path + "' is not a .npy file";
  auto byte = [&](size_t i) {
    return static_cast<size_t>(static_cast<unsigned char>(data[i]));
  };
  size_t major = byte(6), headerLength, offset;
  if (major == 1) {
    headerLength = byte(8) | byte(9) << 8;
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12)
      return "'" + path + "' is truncated: " + std::to_string(size) +
             " bytes, shorter than its header";
    headerLength = byte(8) | byte(9) << 8 | byte(10) << 16 | byte(11) << 24;
    offset = 12;
  } else {
    return "'" + path + "' is .npy version " + std::to_string(major) +
           ", which is not supported (1, 2 and 3 are)";
  }
  if (headerLength > size - offset)
    return "'" + path + "' is truncated: its header needs " +
           std::to_string(offset + headerLength) + " bytes, the file has " +
           std::to_string(size);
  std::string header(data + offset, headerLength);
  std::string descr, fortran, shapeText;
  if (!headerField(header, "descr", descr) ||
      !headerField(header, "fortran_order", fortran) ||
      !headerField(header, "shape", shapeText) ||
      !parseShape(shapeText, tensor.shape))
    return "'" + path + "' has a malformed header";
  if (fortran != "False")
    return "'" + path + "' is in Fortran order, which is not supported";
  const NpyType *type = nullptr;
  if (descr.size() == 3)
    for (const NpyType &t : kNpyTypes)
      if (descr.compare(1, 2, t.code) == 0)
        type = &t;
  if (!type)
    return "'" + path + "' has dtype '" + descr + "', which is not supported";
  // One-byte types carry '|' (no byte order); wider ones must be '<'.
  if (descr[0] != '<' && (descr[0] != '|' || loom_dtype_size(type->dtype) != 1))
    return "'" + path + "' has dtype '" + descr +
           "': only little-endian data is supported";
  tensor.dtype = type->dtype;
  size_t bytes;
  if (!byteSize(tensor.dtype, tensor.shape, bytes))
    return "'" + path + "' has a shape too large: " + typeString(tensor);
  size_t payload = size - offset - headerLength;
  if (payload != bytes)
    return "'" + path + "' is " + (payload < bytes ? "truncated" : "too long") +
           ": " + typeString(tensor) + " needs " + std::to_string(bytes) +
           " bytes of data, the file holds " + std::to_string(payload);
  tensor.data.assign(data + offset + headerLength, data + size);
  return "";
}

std::string readNpy(const std::string &path, Tensor &tensor) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return "cannot read '" + path + "': " + std::strerror(errno);
  std::vector<char> file((std::istreambuf_iterator<char>(in)),
                         std::istreambuf_iterator<char>());
  if (in.bad())
    return "cannot read '" + path + "'";
  return parseNpy(file.data(), file.size(), path, tensor);
}

/// Writes `tensor` as a version 1 .npy file; "" on success.
std::string writeNpy(const std::string &path, const Tensor &tensor) {
  const char *code = nullptr;
  for (const NpyType &t : kNpyTypes)
    if (t.dtype == tensor.dtype)
      code = t.code;
  if (!code)
    return "cannot write '" + path + "': no .npy dtype for " +
           loom_dtype_name(tensor.dtype);
  std::string shape;
  for (int64_t d : tensor.shape)
    shape += (shape.empty() ? "" : ", ") + std::to_string(d);
  shape = "(" + shape + (tensor.shape.size() == 1 ? ",)" : ")");
  std::string header = std::string("{'descr': '") +
                       (loom_dtype_size(tensor.dtype) == 1 ? "|" : "<") + code +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // numpy pads the header so that the data starts on a 64-byte boundary,
  // ending it in '\n'.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out)
    return "cannot write '" + path + "': " + std::strerror(errno);
  out.write("\x93NUMPY\x01\x00", 8);
  out.put(static_cast<char>(header.size() & 0xff));
  out.put(static_cast<char>(header.size() >> 8));
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(tensor.data.data(),
            static_cast<std::streamsize>(tensor.data.size()));
  out.close();
  if (!out)
    return "cannot write '" + path + "'";
  return "";
}

} // namespace loom::exec
