//! Byte offset → line/column conversion for parsers that report byte ranges.

use super::Pos;

/// An index of line starts in a text, answering "which line and column is byte N".
#[derive(Debug)]
pub struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    /// Indexes `text`.
    pub fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { text, starts }
    }

    /// The 1-based position of byte `offset` (clamped to the text; columns in characters).
    pub fn pos(&self, offset: usize) -> Pos {
        let offset = offset.min(self.text.len());
        let line = match self.starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = self.starts[line];
        let mut end = offset;
        while !self.text.is_char_boundary(end) {
            end -= 1;
        }
        let column = self.text[start..end].chars().count() + 1;
        Pos::new(
            u32::try_from(line + 1).unwrap_or(u32::MAX),
            u32::try_from(column).unwrap_or(u32::MAX),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_characters() {
        let idx = LineIndex::new("ab\nçd\n");
        assert_eq!(idx.pos(0), Pos::new(1, 1));
        assert_eq!(idx.pos(3), Pos::new(2, 1));
        assert_eq!(idx.pos(5), Pos::new(2, 2));
        assert_eq!(idx.pos(100), Pos::new(3, 1));
    }
}
