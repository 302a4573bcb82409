// dot.cpp: softfp8 from C++ -- a small value type over libsoftfp8, and a dot
// product accumulated in an 8-bit format with fused multiply-adds.
//
//   c++ -std=c++17 dot.cpp $(softfp8 config --cflags --libs) -o dot
//   ./dot e4m3 upward
//
// Inputs x_i = (i - 8) * 0.37f and y_i = 1.5f - i * 0.11f (float32, i = 0..31) are
// rounded into the format (sfp8_convert), then acc = fma(x_i, y_i, acc) step by
// step.  Each line: i, the float32 bits of x_i and y_i, their codes, acc after the
// step, and the flags that step raised (hex), for comparison with softfp8.bits.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include <softfp8/softfp8.h>

namespace {

class Small {
  public:
    Small(const sfp8_format &f, const sfp8_env &env, uint32_t code) : f_(&f), env_(&env), code_(code) {}

    static Small from_float(const sfp8_format &f, const sfp8_env &env, float x, uint8_t &flags)
    {
        uint32_t bits;
        std::memcpy(&bits, &x, sizeof bits);
        return Small(f, env, static_cast<uint32_t>(sfp8_convert(&sfp8_binary32, &f, bits, &env, &flags)));
    }
    // a * b + c with one rounding
    static Small fma(const Small &a, const Small &b, const Small &c, uint8_t &flags)
    {
        return Small(*a.f_, *a.env_, sfp8_fma(a.f_, a.code_, b.code_, c.code_, a.env_, &flags));
    }
    uint32_t code() const { return code_; }
    double value() const
    {
        uint8_t fl = 0;
        uint64_t bits = sfp8_convert(f_, &sfp8_binary64, code_, env_, &fl);
        double d;
        std::memcpy(&d, &bits, sizeof d);
        return d;
    }

  private:
    const sfp8_format *f_;
    const sfp8_env *env_;
    uint32_t code_;
};

const sfp8_format &preset(const std::string &name)
{
    for (const sfp8_preset &p : sfp8_presets)
        if (name == p.name && !p.bias_parameter) return p.format;
    throw std::invalid_argument("unknown preset " + name);
}

int rounding(const std::string &name)
{
    static const char *const names[] = {"nearest_even", "nearest_away", "toward_zero", "upward",
                                        "downward",     "to_odd"};
    for (int i = 0; i < 6; i++)
        if (name == names[i]) return i;
    throw std::invalid_argument("unknown or stochastic rounding mode " + name);
}

}  // namespace

int main(int argc, char **argv)
{
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s PRESET ROUNDING\n", argv[0]);
        return 2;
    }
    try {
        const sfp8_format &f = preset(argv[1]);
        const sfp8_env env = {rounding(argv[2]), f.saturate, 0, 32, 0, SFP8_ISA_DEFAULT};
        uint8_t ignored = 0;
        Small acc = Small::from_float(f, env, 0.0f, ignored);
        for (int i = 0; i < 32; i++) {
            float x = static_cast<float>(i - 8) * 0.37f, y = 1.5f - static_cast<float>(i) * 0.11f;
            uint32_t xb, yb;
            std::memcpy(&xb, &x, 4);
            std::memcpy(&yb, &y, 4);
            uint8_t cflags = 0, flags = 0;
            Small sx = Small::from_float(f, env, x, cflags), sy = Small::from_float(f, env, y, cflags);
            acc = Small::fma(sx, sy, acc, flags);
            std::printf("%d %08X %08X %04X %04X %04X %02X %02X\n", i, xb, yb, sx.code(), sy.code(),
                        acc.code(), cflags, flags);
        }
        std::fprintf(stderr, "dot = %g\n", acc.value());
    } catch (const std::exception &e) {
        std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
        return 2;
    }
    return 0;
}
