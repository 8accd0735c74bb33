// SHA-256 against the FIPS 180-4 examples and sha256sum, across the
// padding boundaries and in pieces.
#include <gtest/gtest.h>

#include <string>

#include "compiler/sha256.h"

namespace nvfuser {

TEST(Sha256Test, KnownDigests) {
  EXPECT_EQ(toHex(sha256("")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(toHex(sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(
      toHex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(toHex(sha256(std::string(1000000, 'a'))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256Test, PaddingBoundaries) {
  // From sha256sum: 'q' repeated 55, 56, 63, 64, 65, 119 and 120 times.
  const std::pair<size_t, const char*> cases[] = {
      {55, "85528b5baff5639cb8e7daca79d085ac29ac0978e873ed7527158616b2b6c379"},
      {56, "f8ce2f8d6990c639668fe404262f35ed72d8bb145ad6bae786af7284447386df"},
      {63, "9b49777003a4143d8c3f4d3002eb631c6bda8b030a3ccc87f8a21d5f61c89e87"},
      {64, "ee8e658590c9a5e119400a774415a01db104de1ee6e2c29ec69aa73ef46544d2"},
      {65, "2b6c3f7f12b1b12fc5409626dc4e5302d8d37082cbeddea7755eac43aba039c8"},
      {119, "c8bc8a6e9626586bb888ad131d44ed2bd37fc608e902904ade3c566c4208e6ca"},
      {120, "77a2d49d72a11e41678c51f8f0cb67f5cb570f30370c3aeffe266a0d1ee43209"},
  };
  for (const auto& [length, digest] : cases) {
    EXPECT_EQ(toHex(sha256(std::string(length, 'q'))), digest) << length;
  }
}

TEST(Sha256Test, PiecesHashLikeTheWhole) {
  std::string text;
  for (int i = 0; i < 1000; ++i) {
    text += static_cast<char>(i * 7 + 3);
  }
  for (size_t piece : {1, 3, 63, 64, 65, 200}) {
    Sha256 hasher;
    for (size_t at = 0; at < text.size(); at += piece) {
      hasher.update(text.substr(at, piece));
    }
    EXPECT_EQ(hasher.finish(), sha256(text)) << piece;
  }
}

}  // namespace nvfuser
