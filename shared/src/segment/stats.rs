//! Statistics the segmenters share.

/// Mean and population standard deviation, summed in iteration order;
/// `(0, 0)` for no values.
pub(crate) fn mean_std(values: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
    let mut count = 0usize;
    let mut sum = 0.0;
    for v in values.clone() {
        count += 1;
        sum += v;
    }
    if count == 0 {
        return (0.0, 0.0);
    }
    let mean = sum / count as f64;
    let var = values.map(|v| (v - mean) * (v - mean)).sum::<f64>() / count as f64;
    (mean, var.sqrt())
}
