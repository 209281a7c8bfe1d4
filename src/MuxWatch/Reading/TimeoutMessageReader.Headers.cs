namespace MuxWatch.Reading;

/// <content>Reading each header form: where the command, key and timeout are, and where the fields start.</content>
public static partial class TimeoutMessageReader
{
    /// <summary>The longest " (5000ms)" label searched for: a space, parentheses, digits and "ms".</summary>
    private const int MaxTimeoutLabelChars = 24;

    /// <summary>Finds <c>SocketFailure on host:port/Interactive</c> style connection-failure headers.</summary>
    private static bool TryFindConnectionFailureHeader(string text, out int at)
    {
        string[] failureTypes =
        [
            "SocketFailure", "UnableToConnect", "UnableToResolvePhysicalConnection", "ConnectionDisposed",
            "AuthenticationFailure", "SocketClosed", "InternalFailure", "ProtocolFailure", "Loading",
        ];
        foreach (var failure in failureTypes)
        {
            var i = text.IndexOf(failure, StringComparison.Ordinal);
            if (i >= 0 && text.AsSpan(i).Contains(" on ", StringComparison.Ordinal))
            {
                at = i;
                return true;
            }
        }

        at = -1;
        return false;
    }

    /// <summary><c>GET key (5000ms), fields</c> in 2.x/3.x; <c>GET key, fields</c> in 1.x.</summary>
    private static string ReadSyncHeader(string after, ReportBuilder builder)
    {
        var commandEnd = 0;
        while (commandEnd < after.Length && !char.IsWhiteSpace(after[commandEnd]) && after[commandEnd] != ',')
        {
            commandEnd++;
        }

        builder.SetCommand(after[..commandEnd]);
        var remainder = after[commandEnd..];

        // 2.x/3.x: the key runs up to the "(Nms)" that is followed by a field separator or the end.
        var search = 0;
        while (true)
        {
            var open = remainder.IndexOf(" (", search, StringComparison.Ordinal);
            if (open < 0)
            {
                break;
            }

            // "(5000ms)" is short: look only a few characters ahead, so many " (" cost linear time.
            var close = remainder.IndexOf("ms)", open, Math.Min(MaxTimeoutLabelChars, remainder.Length - open), StringComparison.Ordinal);
            if (close > open && FieldValueReader.ParseNumber(remainder[(open + 2)..close]) is { } ms
                && (close + 3 == remainder.Length || remainder[close + 3] is ',' or ';' or ' '))
            {
                builder.SetKey(remainder[..open]);
                builder.TimeoutMilliseconds = ms;
                return remainder[(close + 3)..];
            }

            search = open + 2;
        }

        // 1.x: the key runs up to the first well-known field.
        var fieldsAt = FindFirstKnownField(remainder);
        builder.SetKey(fieldsAt < 0 ? remainder : remainder[..fieldsAt]);
        return fieldsAt < 0 ? string.Empty : remainder[fieldsAt..];
    }

    /// <summary><c>(outbound=0KiB, inbound=0KiB, 5023ms elapsed, timeout is 5000ms), command=GET, fields</c>.</summary>
    private static string ReadAsyncHeader(string after, ReportBuilder builder)
    {
        var open = after.IndexOf('(', StringComparison.Ordinal);
        var close = open < 0 ? -1 : after.IndexOf(')', open);
        if (open < 0 || open > 4 || close < 0)
        {
            return after;
        }

        foreach (var part in after[(open + 1)..close].Split(',', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries))
        {
            if (part.EndsWith(" elapsed", StringComparison.OrdinalIgnoreCase)
                && FieldValueReader.ParseNumber(part[..^" elapsed".Length]) is { } elapsed)
            {
                builder.ElapsedMilliseconds = elapsed;
                builder.AddField("elapsed", FieldValueReader.FromNumber(part, elapsed));
            }
            else if (part.StartsWith("timeout is ", StringComparison.OrdinalIgnoreCase)
                && FieldValueReader.ParseNumber(part["timeout is ".Length..]) is { } timeout)
            {
                builder.TimeoutMilliseconds = timeout;
                builder.AddField("timeout", FieldValueReader.FromNumber(part, timeout));
            }
            else
            {
                ReadField(part, builder);
            }
        }

        return after[(close + 1)..];
    }

    /// <summary><c> (5000ms) - Last Connection Exception: ..., command=GET, fields</c>; the inner exception may hold anything.</summary>
    private static string ReadBacklogHeader(string after, ReportBuilder builder)
    {
        var commandAt = after.IndexOf(", command=", StringComparison.Ordinal);
        var header = commandAt >= 0 ? after[..commandAt] : after;
        var timeoutOpen = header.IndexOf(" (", StringComparison.Ordinal);
        if (timeoutOpen >= 0)
        {
            var timeoutClose = header.IndexOf("ms)", timeoutOpen, Math.Min(MaxTimeoutLabelChars, header.Length - timeoutOpen), StringComparison.Ordinal);
            if (timeoutClose > 0 && FieldValueReader.ParseNumber(header[(timeoutOpen + 2)..timeoutClose]) is { } ms)
            {
                builder.TimeoutMilliseconds = ms;
            }
        }

        const string lastException = "Last Connection Exception:";
        var inner = header.IndexOf(lastException, StringComparison.Ordinal);
        if (inner >= 0)
        {
            builder.AddNote(header[(inner + lastException.Length)..].Trim());
        }

        if (commandAt >= 0)
        {
            return after[commandAt..];
        }

        var fieldsAt = FindFirstKnownField(after);
        return fieldsAt < 0 ? string.Empty : after[fieldsAt..];
    }

    /// <summary><c>: GET key; inner exception; fields</c>.</summary>
    private static string ReadNoConnectionHeader(string after, ReportBuilder builder)
    {
        // "...this operation: GET key" or "...unable to service operation: GET key" (3.x, after "(attempts: 3 - ...)").
        var colon = after.IndexOf("operation: ", StringComparison.Ordinal);
        colon = colon >= 0 ? colon + "operation".Length : after.IndexOf(": ", StringComparison.Ordinal);
        if (colon < 0 || colon > 200)
        {
            return after;
        }

        var label = after[(colon + 2)..];
        var labelEnd = label.IndexOf("; ", StringComparison.Ordinal);
        var fieldsAt = FindFirstKnownField(label);
        if (labelEnd < 0 || (fieldsAt >= 0 && fieldsAt < labelEnd))
        {
            labelEnd = fieldsAt;
        }

        var commandAndKey = labelEnd < 0 ? label : label[..labelEnd];
        var space = commandAndKey.IndexOf(' ', StringComparison.Ordinal);
        builder.SetCommand(space < 0 ? commandAndKey : commandAndKey[..space]);
        if (space > 0)
        {
            builder.SetKey(commandAndKey[(space + 1)..]);
        }

        return labelEnd < 0 ? string.Empty : label[labelEnd..];
    }

    /// <summary><c>SocketFailure (ReadSocketError/ConnectionReset, last-recv: 20) on host:6379/Interactive, fields</c>.</summary>
    private static string ReadFailureHeader(string text, ReportBuilder builder)
    {
        var on = text.IndexOf(" on ", StringComparison.Ordinal);
        var end = text.IndexOfAny([',', ' '], on + 4);
        if (end < 0)
        {
            end = text.Length;
        }

        builder.AddNote(text[..end]);
        return text[end..];
    }

    /// <summary>The index of the separator before the first well-known field (<c>, inst:</c>), or -1.</summary>
    private static int FindFirstKnownField(string text)
    {
        for (var i = text.IndexOf(',', StringComparison.Ordinal); i >= 0; i = text.IndexOf(',', i + 1))
        {
            var j = i + 1;
            while (j < text.Length && text[j] == ' ')
            {
                j++;
            }

            var k = j;
            while (k < text.Length && (char.IsAsciiLetterOrDigit(text[k]) || text[k] is '-' or '_'))
            {
                k++;
            }

            if (k < text.Length && k > j && text[k] is ':' or '=' && FirstFieldNames.Contains(text[j..k]))
            {
                return i;
            }
        }

        return -1;
    }
}
