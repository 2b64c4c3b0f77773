"""DBB (Description-based Bias Benchmark): data expansion, builder, scoring and bias statistics."""
