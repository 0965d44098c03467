// The one list of every op Mono knows. Each X(Name) has a file compiler/ops/<name>.cc that
// defines `const OpDef& op_def_Name()`; every switch over OpKind is checked against this list.
// Gelu and LayerNormalization are also produced by the pattern-recognition passes.
#pragma once

#define MONO_OPS(X)                                                                      \
  X(Abs) X(Add) X(And) X(AveragePool) X(BatchNormalization) X(Cast) X(Clip) X(Concat)     \
  X(Constant) X(ConstantOfShape) X(Conv) X(CumSum) X(Div) X(Dropout) X(Equal) X(Erf)      \
  X(Exp) X(Expand) X(Flatten) X(Gather) X(GatherElements) X(Gelu) X(Gemm)                \
  X(GlobalAveragePool) X(Greater) X(GreaterOrEqual) X(Identity) X(IsNaN)                 \
  X(LayerNormalization) X(Less) X(LessOrEqual) X(Log) X(MatMul) X(Max) X(MaxPool) X(Min)  \
  X(Mul) X(Neg) X(Not) X(Or) X(Pow) X(Range) X(Reciprocal) X(ReduceMax) X(ReduceMean)     \
  X(ReduceSum) X(Relu) X(Reshape) X(Shape) X(Sigmoid) X(Slice) X(Softmax) X(Split)        \
  X(Sqrt) X(Squeeze) X(Sub) X(Tanh) X(Transpose) X(Unsqueeze) X(Where)

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
