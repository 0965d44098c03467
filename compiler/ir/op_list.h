// The one list of every op Mono knows. Each X(Name) has a file compiler/ops/<name>.cc that
// defines `const OpDef& op_def_Name()`; every switch over OpKind is checked against this list.
// Gelu, LayerNormalization and Swish are also produced by the pattern-recognition passes.
#pragma once

#define MONO_OPS(X)                                                                 \
  X(Abs) X(Acos) X(Acosh) X(Add) X(And) X(ArgMax) X(ArgMin) X(Asin) X(Asinh)        \
  X(Atan) X(Atanh) X(AveragePool) X(BatchNormalization) X(Cast) X(Ceil) X(Celu)     \
  X(Clip) X(Concat) X(Constant) X(ConstantOfShape) X(Conv) X(Cos) X(Cosh) X(CumSum) \
  X(DepthToSpace) X(Div) X(Dropout) X(Elu) X(Equal) X(Erf) X(Exp) X(Expand)         \
  X(Flatten) X(Floor) X(Gather) X(GatherElements) X(Gelu) X(Gemm)                   \
  X(GlobalAveragePool) X(GlobalMaxPool) X(Greater) X(GreaterOrEqual) X(HardSigmoid) \
  X(HardSwish) X(Identity) X(InstanceNormalization) X(IsInf) X(IsNaN)               \
  X(LayerNormalization) X(LeakyRelu) X(Less) X(LessOrEqual) X(Log) X(LogSoftmax)    \
  X(MatMul) X(Max) X(MaxPool) X(Mean) X(Min) X(Mish) X(Mod) X(Mul) X(Neg) X(Not)    \
  X(Or) X(PRelu) X(Pad) X(Pow) X(Range) X(Reciprocal) X(ReduceL1) X(ReduceL2)       \
  X(ReduceLogSum) X(ReduceLogSumExp) X(ReduceMax) X(ReduceMean) X(ReduceMin)        \
  X(ReduceProd) X(ReduceSum) X(ReduceSumSquare) X(Relu) X(Reshape) X(Resize)        \
  X(Round) X(ScatterND) X(Selu) X(Shape) X(Shrink) X(Sigmoid) X(Sign) X(Sin)        \
  X(Sinh) X(Size) X(Slice) X(Softmax) X(Softplus) X(Softsign) X(SpaceToDepth)       \
  X(Split) X(Sqrt) X(Squeeze) X(Sub) X(Sum) X(Swish) X(Tan) X(Tanh)                \
  X(ThresholdedRelu) X(Tile) X(Transpose) X(Trilu) X(Unsqueeze) X(Where) X(Xor)

namespace mono {

enum class OpKind : int {
#define MONO_OP_ENUM(name) k##name,
  MONO_OPS(MONO_OP_ENUM)
#undef MONO_OP_ENUM
};

constexpr int kNumOps = 0
#define MONO_OP_COUNT(name) +1
    MONO_OPS(MONO_OP_COUNT)
#undef MONO_OP_COUNT
    ;

const char* op_name(OpKind op);
bool op_from_name(const char* name, OpKind* out);

}  // namespace mono
