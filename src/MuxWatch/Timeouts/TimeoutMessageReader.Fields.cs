namespace MuxWatch.Timeouts;

/// <content>Splitting the field list into <c>key: value</c> fields, tuples kept whole.</content>
public static partial class TimeoutMessageReader
{
    /// <summary>
    /// Splits the field list at top-level commas and semicolons that are followed by a space or by a
    /// <c>key:</c>; a comma between digits (a decimal comma) or inside a tuple does not split.
    /// </summary>
    private static void ReadFields(string rest, ReportBuilder builder)
    {
        var start = 0;
        var i = 0;
        while (i < rest.Length && builder.FieldCount < MaxFields)
        {
            var c = rest[i];
            if (c == '(' && IsTupleStart(rest, i))
            {
                // Skip to the ')' only when everything up to it is Name=Value parts: an unbalanced '('
                // must not swallow the fields after it.
                var close = rest.IndexOf(')', i);
                if (close > 0 && IsTupleBody(rest.AsSpan(i + 1, close - i - 1)))
                {
                    i = close + 1;
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
            var name = token[..sep].TrimEnd();
            var value = token[(sep + 1)..];
            builder.AddField(name, FieldValue.Parse(value));
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
        var open = token.IndexOf(" (", StringComparison.Ordinal);
        while (open >= 0)
        {
            var tail = token.AsSpan(open);
            if (tail.Contains("http", StringComparison.OrdinalIgnoreCase) || tail.Contains("Please take a look", StringComparison.OrdinalIgnoreCase))
            {
                return token[..open].TrimEnd();
            }

            open = token.IndexOf(" (", open + 2, StringComparison.Ordinal);
        }

        return token;
    }
}
