namespace MuxWatch.Reading;

/// <content>Splitting the field list into <c>key: value</c> fields, tuples kept whole.</content>
public static partial class TimeoutMessageReader
{
    /// <summary>The longest tuple searched for, such as <c>(Threads=9,QueuedItems=0,CompletedItems=123456,Timers=12)</c> with spaces.</summary>
    private const int MaxTupleChars = 256;

    /// <summary>How the client's help-link tail starts, in 1.x/2.x and in 3.x.</summary>
    private static readonly string[] HelpLinkAnchors = [" (Please take a look", "(Please take a look", " (see http", " (Please", "(Please ", " (see "];

    /// <summary>
    /// Splits the field list at top-level commas and semicolons that are followed by a space or by a
    /// <c>key:</c>; a comma between digits (a decimal comma) or inside a tuple does not split.
    /// </summary>
    private static void ReadFields(string rest, ReportBuilder builder)
    {
        rest = PastedText.RepairTupleDashes(PastedText.RepairTupleNameDebris(rest));
        var start = 0;
        var i = 0;
        while (i < rest.Length && builder.FieldCount < MaxFields)
        {
            var c = rest[i];
            if (c == '(' && IsTupleStart(rest, i))
            {
                // Skip to the ')' only when everything up to it is Name=Value parts: an unbalanced '('
                // must not swallow the fields after it.
                // Tuples are short; looking only so far ahead keeps many unclosed '(' linear.
                var close = rest.IndexOf(')', i, Math.Min(MaxTupleChars, rest.Length - i));
                if (close > 0 && IsTupleBody(rest.AsSpan(i + 1, close - i - 1)))
                {
                    i = close + 1;
                    continue;
                }

                // A tuple that never closes (a message cut off inside it): its Name=Value parts stay
                // together as the tuple, rather than each becoming a field of its own.
                if (close < 0 && UnclosedTupleEnd(rest, i) is var end and > 0)
                {
                    i = end;
                    continue;
                }
            }

            if ((c == ',' || c == ';') && IsSeparator(rest, i))
            {
                ReadField(rest[start..i], builder);
                start = i + 1;
            }

            i++;
        }

        if (start < rest.Length && builder.FieldCount < MaxFields)
        {
            ReadField(rest[start..], builder);
        }
    }

    private static bool IsTupleStart(string text, int open)
    {
        // "IOCP: (Busy=..." - a '(' right after "key: " and followed by a name and '='.
        var j = open + 1;
        var k = j;
        while (k < text.Length && k - j <= MaxKeyLength && char.IsAsciiLetterOrDigit(text[k]))
        {
            k++;
        }

        return k > j && k < text.Length && text[k] == '=';
    }

    /// <summary>Where the <c>Name=Value</c> parts after an unclosed <c>(</c> end, or -1 when none follow it.</summary>
    private static int UnclosedTupleEnd(string text, int open)
    {
        var end = -1;
        var at = open + 1;
        while (at < text.Length && at - open <= MaxTupleChars)
        {
            var comma = text.IndexOf(',', at);
            var partEnd = comma < 0 ? text.Length : comma;
            var part = text.AsSpan(at, partEnd - at).Trim();
            var eq = part.IndexOf('=');
            if (eq <= 0 || !IsFieldName(part[..eq].TrimEnd()) || part[(eq + 1)..].Trim().ContainsAny(':', ' ', '('))
            {
                break;
            }

            end = partEnd;
            at = partEnd + 1;
        }

        return end;
    }

    private static bool IsTupleBody(ReadOnlySpan<char> body)
    {
        foreach (var range in body.Split(','))
        {
            var part = body[range].Trim();
            var eq = part.IndexOf('=');
            if (eq <= 0 || !IsFieldName(part[..eq].TrimEnd()))
            {
                return false;
            }
        }

        return true;
    }

    private static bool IsSeparator(string text, int at)
    {
        if (at + 1 >= text.Length)
        {
            return true;
        }

        var next = text[at + 1];
        if (char.IsWhiteSpace(next))
        {
            return true;
        }

        // ",inst: 2" (separator without a space), but not "12,5" (decimal comma).
        return !char.IsAsciiDigit(next) && StartsWithFieldName(text.AsSpan(at + 1, Math.Min(text.Length, at + 2 + MaxKeyLength) - at - 1));
    }

    private static void ReadField(string token, ReportBuilder builder)
    {
        token = StripHelpLink(token.Trim());
        if (token.Length == 0)
        {
            return;
        }

        var sep = token.IndexOfAny([':', '=']);
        if (sep > 0 && IsFieldName(token.AsSpan(0, sep).TrimEnd()) && !token.AsSpan(sep).StartsWith("://", StringComparison.Ordinal))
        {
            var name = PastedText.FieldName(token[..sep].TrimEnd());
            var value = token[(sep + 1)..];
            builder.AddField(name, FieldValueReader.Parse(value));
            return;
        }

        if (token.StartsWith("http", StringComparison.OrdinalIgnoreCase))
        {
            return;
        }

        builder.AddNote(token);
    }

    /// <summary>Removes the trailing <c>(Please take a look at this article ...)</c> or <c>(see https://... )</c>.</summary>
    private static string StripHelpLink(string token)
    {
        var cut = -1;
        foreach (var anchor in HelpLinkAnchors)
        {
            var at = token.IndexOf(anchor, StringComparison.OrdinalIgnoreCase);
            if (at >= 0 && (cut < 0 || at < cut))
            {
                cut = at;
            }
        }

        return cut < 0 ? token : token[..cut].TrimEnd();
    }
}
