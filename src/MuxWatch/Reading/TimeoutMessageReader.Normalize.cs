using System.Text;

namespace MuxWatch.Reading;

/// <content>Turning pasted text into one line: stack traces dropped, wrapped lines joined.</content>
public static partial class TimeoutMessageReader
{
    /// <summary>
    /// Control characters (after line breaks were joined) become spaces: they are never part of a
    /// message, and each would be escaped six-fold in every JSON answer that shows it.
    /// </summary>
    private static string WithoutControlCharacters(string text)
    {
        if (!text.AsSpan().ContainsAnyInRange('\0', '\u001f') && !text.AsSpan().ContainsAnyInRange('\u007f', '\u009f') && !text.Contains('\uFEFF', StringComparison.Ordinal))
        {
            return text;
        }

        return string.Create(text.Length, text, static (span, source) =>
        {
            for (var i = 0; i < source.Length; i++)
            {
                span[i] = char.IsControl(source[i]) || source[i] == '\uFEFF' ? ' ' : source[i];
            }
        });
    }

    /// <summary>
    /// Drops stack-trace lines and joins the rest: a break between two word characters was a wrap
    /// inside a token; a break before <c>key:</c> separated two fields.
    /// </summary>
    private static string Normalize(string input)
    {
        input = CodeSpansAsLines(input);
        if (input.AsSpan().IndexOfAny('\r', '\n') < 0)
        {
            return input.Trim();
        }

        var sb = new StringBuilder(input.Length);
        foreach (var rawLine in input.Split('\n'))
        {
            var line = rawLine.TrimEnd('\r');
            var trimmed = line.TrimStart();
            if (trimmed.Length == 0 || IsStackTraceLine(trimmed))
            {
                continue;
            }

            if (sb.Length > 0)
            {
                JoinLine(sb, line, trimmed);
            }

            sb.Append(trimmed);
        }

        return sb.ToString().Trim();
    }

    /// <summary>
    /// A message pasted as code, as GitHub, Slack and Teams users paste it: a fence (<c>```text</c>) is no part of it, and
    /// each code span is a line of its own (<c>`line`</c> per line, or spans run together, <c>`a``b`</c> and <c>`a` `b`</c>),
    /// whose backticks go. The client never writes a backtick, so a text with none is returned as it is.
    /// </summary>
    private static string CodeSpansAsLines(string input)
    {
        if (!input.Contains('`', StringComparison.Ordinal))
        {
            return input;
        }

        var sb = new StringBuilder(input.Length);
        foreach (var rawLine in input.Split('\n'))
        {
            var line = rawLine.TrimEnd('\r');
            if (line.TrimStart().StartsWith("```", StringComparison.Ordinal))
            {
                continue; // a fence, with its language if any
            }

            // Spans run together or side by side are lines side by side.
            foreach (var span in line.Replace("` `", "\n", StringComparison.Ordinal).Replace("``", "\n", StringComparison.Ordinal).Split('\n'))
            {
                sb.Append(span.Trim().Trim('`')).Append('\n');
            }
        }

        return sb.ToString();
    }

    /// <summary>
    /// Joins the next line: after <c>(</c> directly (a tuple split one part per line); before a
    /// <c>key:</c> that follows a whole field with <c>", "</c>; after a separator or before an indented
    /// line with a space; otherwise directly, since the break was a wrap inside a token (<c>WOR|KER</c>).
    /// </summary>
    private static void JoinLine(StringBuilder sb, string line, string trimmed)
    {
        var hadTrailingSpace = char.IsWhiteSpace(sb[^1]);
        while (sb.Length > 0 && char.IsWhiteSpace(sb[^1]))
        {
            sb.Length--;
        }

        if (sb.Length == 0)
        {
            return;
        }

        var previous = sb[^1];
        if (previous == '(' || trimmed[0] == ')')
        {
            return;
        }

        if (previous is ',' or ';')
        {
            sb.Append(' ');
        }
        else if (StartsWithFieldName(trimmed) && EndsWithCompleteField(sb))
        {
            sb.Append(", ");
        }
        else if (hadTrailingSpace || char.IsWhiteSpace(line[0]) || trimmed[0] == '(')
        {
            sb.Append(' ');
        }
    }

    /// <summary>
    /// True when the text after the last field separator is a whole <c>key: value</c>: a line that ended
    /// there separated fields; one that ended inside a bare word (<c>WOR|KER:</c>) was wrapped mid-token.
    /// </summary>
    private static bool EndsWithCompleteField(StringBuilder sb)
    {
        var start = Math.Max(0, sb.Length - 256);
        var tail = sb.ToString(start, sb.Length - start);
        var separator = Math.Max(tail.LastIndexOf(", ", StringComparison.Ordinal), tail.LastIndexOf("; ", StringComparison.Ordinal));
        var last = separator < 0 ? tail : tail[(separator + 2)..];
        return last.Contains(':', StringComparison.Ordinal) || last.Contains('=', StringComparison.Ordinal);
    }

    private static bool IsStackTraceLine(string trimmed) =>
        (trimmed.StartsWith("at ", StringComparison.Ordinal) && trimmed.Contains('(', StringComparison.Ordinal))
        || trimmed.StartsWith("--- End of", StringComparison.Ordinal);

    private static bool StartsWithFieldName(ReadOnlySpan<char> line)
    {
        var i = 0;
        while (i < line.Length && i <= MaxKeyLength && (char.IsAsciiLetterOrDigit(line[i]) || line[i] is '-' or '_'))
        {
            i++;
        }

        return i > 0 && i < line.Length && (line[i] == ':' || line[i] == '=') && IsFieldName(line[..i])
            && !line[i..].StartsWith("://", StringComparison.Ordinal);
    }

    private static string RemoveThreadTheftMarker(string text, int at)
    {
        // " ** possible thread-theft indicated; see https://... ** " sits between header and fields.
        var start = text.LastIndexOf("**", at, StringComparison.Ordinal);
        var end = text.IndexOf("**", at, StringComparison.Ordinal);
        if (start < 0 || end < 0)
        {
            return text;
        }

        return string.Concat(text.AsSpan(0, start).TrimEnd(), text.AsSpan(end + 2));
    }
}
