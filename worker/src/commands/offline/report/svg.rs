//! The chunk size histogram: an inline SVG of `token_count` bins, with the
//! profile's target and hard max drawn as lines.

use std::fmt::Write;

/// Width and height of the drawing, in CSS pixels.
const WIDTH: f64 = 300.0;
const HEIGHT: f64 = 84.0;
/// Room for the axis labels below the bars and the line labels above.
const TOP: f64 = 14.0;
const BOTTOM: f64 = 14.0;
const LEFT: f64 = 4.0;
const RIGHT: f64 = 4.0;

/// The histogram of `tokens` (sorted or not) against the profile's limits.
pub(super) fn histogram(tokens: &[u32], target: usize, hard_max: usize) -> String {
    let largest = tokens.iter().copied().max().unwrap_or(0) as usize;
    let upper = largest.max(hard_max).max(1);
    let width = bin_width(upper);
    let bins = upper / width + 1;
    let mut counts = vec![0usize; bins];
    for &t in tokens {
        counts[(t as usize / width).min(bins - 1)] += 1;
    }
    let tallest = counts.iter().copied().max().unwrap_or(0).max(1);
    let span = (bins * width) as f64;
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let x = |tokens: usize| LEFT + tokens as f64 / span * plot_w;

    let mut svg = String::with_capacity(2048);
    let _ = write!(
        svg,
        "<svg class=\"hist\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" width=\"{WIDTH}\" height=\"{HEIGHT}\" \
         role=\"img\" aria-label=\"chunk sizes: {} chunks in bins of {width} tokens; hard max {hard_max}\">",
        tokens.len()
    );
    let base = HEIGHT - BOTTOM;
    let _ = write!(
        svg,
        "<line class=\"axis\" x1=\"{LEFT}\" y1=\"{base}\" x2=\"{:.1}\" y2=\"{base}\"/>",
        WIDTH - RIGHT
    );
    for (i, &count) in counts.iter().enumerate() {
        if count == 0 {
            continue;
        }
        let h = (count as f64 / tallest as f64 * plot_h).max(1.0);
        let (x0, x1) = (x(i * width), x((i + 1) * width));
        let over = i * width > hard_max;
        let _ = write!(
            svg,
            "<rect class=\"{}\" x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{h:.1}\"><title>{}-{} tokens: {count} chunk{}</title></rect>",
            if over { "bar over" } else { "bar" },
            base - h,
            (x1 - x0 - 1.0).max(1.0),
            i * width,
            (i + 1) * width - 1,
            if count == 1 { "" } else { "s" },
        );
    }
    // The tallest bin's count, so the bars have a scale.
    let _ = write!(
        svg,
        "<text class=\"lbl\" x=\"{LEFT}\" y=\"{:.1}\">{tallest} max/bin</text>",
        TOP - 3.0
    );
    if target > 0 && target < hard_max {
        let xt = x(target);
        let _ = write!(
            svg,
            "<line class=\"target\" x1=\"{xt:.1}\" y1=\"{TOP}\" x2=\"{xt:.1}\" y2=\"{base}\"><title>target {target} tokens</title></line>"
        );
    }
    let xh = x(hard_max);
    let _ = write!(
        svg,
        "<line class=\"hard\" x1=\"{xh:.1}\" y1=\"{:.1}\" x2=\"{xh:.1}\" y2=\"{base}\"/>",
        TOP - 2.0
    );
    let anchor = if xh > WIDTH * 0.6 { "end" } else { "start" };
    let nudge = if anchor == "end" { -3.0 } else { 3.0 };
    svg.push_str("<text class=\"lbl hardlbl\" text-anchor=\"");
    svg.push_str(anchor);
    let _ = write!(
        svg,
        "\" x=\"{:.1}\" y=\"{:.1}\">hard max {hard_max}</text>",
        xh + nudge,
        TOP - 3.0
    );
    let _ = write!(
        svg,
        "<text class=\"lbl\" x=\"{LEFT}\" y=\"{:.1}\">0</text>",
        HEIGHT - 2.0
    );
    let _ = write!(
        svg,
        "<text class=\"lbl\" text-anchor=\"end\" x=\"{:.1}\" y=\"{:.1}\">{} tokens</text></svg>",
        WIDTH - RIGHT,
        HEIGHT - 2.0,
        bins * width
    );
    svg
}

/// A round bin width (1, 2 or 5 times a power of ten) giving 10-25 bins
/// up to `upper` tokens.
fn bin_width(upper: usize) -> usize {
    const STEPS: [usize; 3] = [1, 2, 5];
    let mut scale = 1;
    loop {
        for step in STEPS {
            let w = step * scale;
            if upper / w <= 24 {
                return w;
            }
        }
        scale *= 10;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_are_round_and_few() {
        assert_eq!(bin_width(520), 50);
        assert_eq!(bin_width(1000), 50);
        assert_eq!(bin_width(20), 1);
        assert_eq!(bin_width(8192), 500);
    }

    #[test]
    fn every_chunk_lands_in_a_bar_and_the_hard_max_is_stated() {
        let svg = histogram(&[10, 60, 61, 515], 350, 520);
        assert!(svg.contains("hard max 520"), "{svg}");
        assert!(svg.contains("50-99 tokens: 2 chunks"), "{svg}");
        assert!(svg.contains("500-549 tokens: 1 chunk<"), "{svg}");
        assert_eq!(svg.matches("<rect").count(), 3);
    }

    #[test]
    fn no_chunks_is_an_empty_plot() {
        let svg = histogram(&[], 350, 520);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert_eq!(svg.matches("<rect").count(), 0);
    }
}
