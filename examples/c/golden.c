/*
 * golden.c: softfp8 as a golden model from C, linked against libsoftfp8.
 *
 *   cc -std=c11 golden.c $(softfp8 config --cflags --libs) -o golden
 *   ./golden e4m3 mul nearest_even        every case of an 8-bit preset
 *
 * Prints one line per case in the format of `softfp8 gen` (TestFloat's: operands,
 * result, flags in hex), so `./golden e4m3 mul upward | softfp8 ver e4m3 mul
 * --rounding upward` checks this program against the Python API.  Operations are
 * addressed through the operation table (sfp8_op_lookup / sfp8_op_apply); the
 * last lines show the direct calls (sfp8_add, sfp8_convert) the table stands for.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <softfp8/softfp8.h>

static const char *const ROUNDING[SFP8_NUM_ROUNDING] = {
    "nearest_even", "nearest_away", "toward_zero", "upward", "downward", "to_odd", "stochastic"};

static const sfp8_format *preset(const char *name)
{
    for (int i = 0; i < SFP8_NUM_PRESETS; i++)
        if (strcasecmp(sfp8_presets[i].name, name) == 0 && !sfp8_presets[i].bias_parameter)
            return &sfp8_presets[i].format;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s PRESET OP ROUNDING   (an 8-bit preset, an operation "
                        "of softfp8.bits, a rounding mode but stochastic)\n", argv[0]);
        return 2;
    }
    const sfp8_format *f = preset(argv[1]);
    int op = sfp8_op_lookup(argv[2]);
    int mode = -1;
    for (int i = 0; i < SFP8_ROUND_STOCHASTIC; i++)
        if (strcmp(ROUNDING[i], argv[3]) == 0) mode = i;
    if (f == NULL || f->bits != 8 || op < 0 || sfp8_op_arity(op) > 2 || mode < 0) {
        fprintf(stderr, "%s: need an 8-bit preset, a unary or binary operation and a "
                        "deterministic rounding mode\n", argv[0]);
        return 2;
    }
    /* saturation: the format's default, as softfp8.bits with saturate=None */
    sfp8_env env = {mode, f->saturate, 0, 32, 0, SFP8_ISA_DEFAULT};
    int arity = sfp8_op_arity(op), kind = sfp8_op_kind(op);
    unsigned ncases = arity == 1 ? 256u : 65536u;
    for (unsigned i = 0; i < ncases; i++) {
        uint32_t a = arity == 1 ? i : i >> 8, b = i & 0xFF;
        uint8_t flags = 0;
        uint32_t r = sfp8_op_apply(op, f, a, b, 0, &env, &flags);
        if (arity == 2)
            printf("%02X %02X ", (unsigned)a, (unsigned)b);
        else
            printf("%02X ", (unsigned)a);
        if (kind == SFP8_OP_COMPARE || kind == SFP8_OP_PREDICATE)
            printf("%X %02X\n", (unsigned)r, flags);
        else
            printf("%02X %02X\n", (unsigned)(r & 0xFF), flags);
    }
    /* the same operations, called directly (to stderr: not part of the vectors) */
    uint8_t fl = 0;
    uint32_t one = sfp8_convert(&sfp8_binary64, f, 0x3FF0000000000000ull, &env, &fl);
    uint32_t two = sfp8_add(f, one, one, &env, &fl);
    fprintf(stderr, "%s: 1 = %02X, 1 + 1 = %02X, flags %02X; %d operations in the table\n",
            argv[1], (unsigned)one, (unsigned)two, fl, sfp8_op_count());
    return 0;
}
