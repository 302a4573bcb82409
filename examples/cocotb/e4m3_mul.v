// An OCP E4M3 multiplier (S.EEEE.MMM, bias 7, no infinity, NaN S.1111.111, subnormals,
// non-saturating: overflow gives NaN with overflow|inexact), round to nearest even,
// tininess after rounding.  Flags in softfp8's layout: [0] inexact [1] underflow
// [2] overflow [3] divide-by-zero [4] invalid [5] denormal (a subnormal operand).
// Written for the softfp8 cocotb example (examples/cocotb/); BUG != 0 plants a bug
// the scoreboard must report: ties round away from zero instead of to even.
module e4m3_mul_lane #(parameter BUG = 0) (
    input  wire [7:0] a,
    input  wire [7:0] b,
    output reg  [7:0] y,
    output reg  [5:0] flags
);
  reg        sa, sb, sy, nan_a, nan_b, sub_a, sub_b, g, r, st, up, tiny, carry_u;
  reg [3:0]  ea, eb;
  reg [3:0]  ma, mb;                 // significands with the hidden bit
  reg [7:0]  p;                      // exact product of the significands
  integer    x, l, ex, q, s, k, field, i;
  reg [15:0] dropped;

  always @* begin
    sa = a[7]; sb = b[7]; sy = sa ^ sb;
    nan_a = a[6:0] == 7'h7F; nan_b = b[6:0] == 7'h7F;
    sub_a = a[6:3] == 4'd0 && a[2:0] != 3'd0;
    sub_b = b[6:3] == 4'd0 && b[2:0] != 3'd0;
    ea = a[6:3] == 4'd0 ? 4'd1 : a[6:3];
    eb = b[6:3] == 4'd0 ? 4'd1 : b[6:3];
    ma = {a[6:3] != 4'd0, a[2:0]};
    mb = {b[6:3] != 4'd0, b[2:0]};
    p = ma * mb;                      // value = p * 2^(ea + eb - 20)
    x = ea + eb - 20;
    flags = {sub_a | sub_b, 5'b0};
    y = 8'h00;
    if (nan_a) y = a;                 // the first NaN operand (softfp8's convention)
    else if (nan_b) y = b;
    else if (p == 0) y = {sy, 7'h00};
    else begin
      l = 0;
      for (i = 0; i < 8; i = i + 1) if (p[i]) l = i;
      ex = x + l;                     // 2^ex <= |value| < 2^(ex+1)
      q = (ex < -6 ? -6 : ex) - 3;    // the quantum: binade, or the subnormal grid
      s = q - x;                      // bits of p below the rounding point
      if (s <= 0) begin
        k = p << (-s); g = 0; r = 0; st = 0;
      end else begin
        k = p >> s;
        dropped = p & ((16'd1 << s) - 1);
        g = (p >> (s - 1)) & 1;
        r = s >= 2 ? (p >> (s - 2)) & 1 : 0;
        st = s >= 3 ? (p & ((16'd1 << (s - 2)) - 1)) != 0 : 0;
      end
      up = BUG ? g : g & (r | st | k[0]);
      k = k + up;
      // tininess after rounding: the value rounded to 4 bits with an unbounded exponent
      carry_u = (p >> (l >= 3 ? l - 3 : 0)) == 15 && l >= 4 && ((p >> (l - 4)) & 1);
      tiny = ex < -7 || (ex == -7 && !carry_u);
      if (k >= 16) begin k = k >> 1; ex = ex + 1; end
      field = k >= 8 ? (ex < -6 ? -6 : ex) + 7 : 0;
      if (field > 15 || (field == 15 && (k & 7) == 7)) begin
        y = {sy, 7'h7F};              // overflow: NaN (no infinity, not saturating)
        flags[2] = 1; flags[0] = 1;
      end else begin
        y = {sy, field[3:0], k[2:0]};
        flags[0] = g | r | st;
        flags[1] = (g | r | st) & tiny;
      end
    end
  end
endmodule

// LANES multipliers side by side on packed buses: lane i in bits [8i+7:8i] (flags [6i+5:6i])
module e4m3_mul #(parameter LANES = 4, parameter BUG = 0) (
    input  wire [8*LANES-1:0] a,
    input  wire [8*LANES-1:0] b,
    output wire [8*LANES-1:0] y,
    output wire [6*LANES-1:0] flags
);
  genvar i;
  generate
    for (i = 0; i < LANES; i = i + 1) begin : lane
      e4m3_mul_lane #(.BUG(BUG)) u (.a(a[8*i +: 8]), .b(b[8*i +: 8]), .y(y[8*i +: 8]),
                                    .flags(flags[6*i +: 6]));
    end
  endgenerate
endmodule
