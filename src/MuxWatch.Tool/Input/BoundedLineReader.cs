using System.Text;

namespace MuxWatch.Tool.Input;

/// <summary>
/// Reads lines of at most a fixed length: a longer line is reported as too long and skipped to its
/// end without being kept. <see cref="TextReader.ReadLineAsync()"/> would hold an endless line whole.
/// </summary>
/// <remarks>Written by hand: the BCL's readers have no bound on a line's length.</remarks>
internal sealed class BoundedLineReader(TextReader input, int maxChars)
{
    private readonly char[] _buffer = new char[4096];
    private int _position;
    private int _length;

    /// <summary>The next line, or null at the end of the input.</summary>
    public async Task<(string Text, bool TooLong)?> ReadLineAsync()
    {
        var line = new StringBuilder();
        var tooLong = false;
        var sawAny = false;
        while (true)
        {
            if (_position == _length)
            {
                _length = await input.ReadAsync(_buffer.AsMemory()).ConfigureAwait(false);
                _position = 0;
                if (_length == 0)
                {
                    return sawAny ? (line.ToString(), tooLong) : null;
                }
            }

            sawAny = true;
            var span = _buffer.AsSpan(_position, _length - _position);
            var newline = span.IndexOf('\n');
            var chunk = newline >= 0 ? span[..newline] : span;
            if (!tooLong)
            {
                if (line.Length + chunk.Length > maxChars)
                {
                    tooLong = true;
                    line.Clear();
                }
                else
                {
                    line.Append(chunk);
                }
            }

            _position += newline >= 0 ? newline + 1 : chunk.Length;
            if (newline >= 0)
            {
                if (line.Length > 0 && line[^1] == '\r')
                {
                    line.Length--;
                }

                return (line.ToString(), tooLong);
            }
        }
    }
}
