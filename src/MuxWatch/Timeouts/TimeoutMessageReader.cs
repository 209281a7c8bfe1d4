using System.Collections;
using System.Text;

namespace MuxWatch.Timeouts;

/// <summary>
/// Reads the text of a StackExchange.Redis timeout or connection error, of any client generation
/// (1.x, 2.x, 2.6+ and 3.x), as people paste it: with log prefixes, line breaks, stack traces,
/// keys full of punctuation and missing tails.
/// </summary>
/// <remarks>
/// It never throws and always returns what it could read. Input beyond <see cref="MaxInputChars"/>
/// is ignored: real messages are a few KiB, and a bound keeps a hostile input cheap.
/// </remarks>
public static class TimeoutMessageReader
{
    /// <summary>Characters read at most; the rest of a longer input is ignored.</summary>
    public const int MaxInputChars = 32 * 1024;

    private const int MaxKeyLength = 40;
    private const int MaxKeptTextChars = 4096;
    private const int MaxNotes = 16;
    private const int MaxFields = 200;

    /// <summary>
    /// Field names that start the field list after a header; used to find where a key that may itself
    /// contain commas ends, in the older headers that have no <c>(Nms)</c> to close them.
    /// </summary>
    private static readonly HashSet<string> FirstFieldNames = new(StringComparer.Ordinal)
    {
        "inst", "mgr", "err", "queue", "qu", "qs", "qc", "wr", "wq", "in", "ar", "next", "active",
        "timeout", "outbound", "inbound", "command", "aw", "bw", "rs", "ws", "serverEndpoint",
        "clientName", "IOCP", "WORKER", "POOL", "v", "mc",
    };

    private static readonly (string Anchor, RedisErrorKind Kind)[] Headers =
    [
        ("Timeout performing ", RedisErrorKind.SyncTimeout),
        ("Timeout awaiting response", RedisErrorKind.AsyncTimeout),
        ("The message timed out in the backlog", RedisErrorKind.BacklogTimeout),
        ("The timeout was reached before the message could be written to the output buffer, and it was not sent", RedisErrorKind.WriteTimeout),
        ("No connection is active/available to service this operation", RedisErrorKind.NoConnection),
        ("No connection is available to service this operation", RedisErrorKind.NoConnection),
        ("No connection (requires writable - not eligible for replica) is active/available to service this operation", RedisErrorKind.NoConnection),
        ("Connection to Redis never succeeded", RedisErrorKind.NoConnection),
        ("It was not possible to connect to the redis server", RedisErrorKind.ConnectionFailure),
    ];

    /// <summary>
    /// Long names under which StackExchange.Redis stores each field in <see cref="Exception.Data"/>
    /// (as <c>Redis-&lt;long name&gt;</c>), mapped to the short key the message text uses.
    /// 3.x names first; the 1.x names that differ follow.
    /// </summary>
    private static readonly Dictionary<string, string> DataKeyToField = new(StringComparer.OrdinalIgnoreCase)
    {
        ["OpsSinceLastHeartbeat"] = "inst",
        ["Queue-Awaiting-Write"] = "qu",
        ["Queue-Awaiting-Response"] = "qs",
        ["Active-Writer"] = "aw",
        ["Backlog-Writer"] = "bw",
        ["Read-State"] = "rs",
        ["Write-State"] = "ws",
        ["Inbound-Bytes"] = "in",
        ["Inbound-Pipe-Bytes"] = "in-pipe",
        ["Outbound-Pipe-Bytes"] = "out-pipe",
        ["Last-Result-Bytes"] = "last-in",
        ["Inbound-Buffer-Bytes"] = "cur-in",
        ["Live-Multiplexers"] = "lm",
        ["Sync-Ops"] = "sync-ops",
        ["Async-Ops"] = "async-ops",
        ["Server-Endpoint"] = "serverEndpoint",
        ["Server-Connected-Seconds"] = "conn-sec",
        ["Abort-On-Connect"] = "aoc",
        ["Multiplexer-Connects"] = "mc",
        ["Client-Name"] = "clientName",
        ["Key-HashSlot"] = "keyHashSlot",
        ["ThreadPool-IO-Completion"] = "IOCP",
        ["ThreadPool-Workers"] = "WORKER",
        ["ThreadPool-Items"] = "POOL",
        ["Version"] = "v",
        ["Timeout"] = "timeout",
        ["OutboundDeltaKB"] = "outbound",
        ["InboundDeltaKB"] = "inbound",
        ["Message-Current"] = "active",
        ["Message-Next"] = "next",
        ["Instantaneous"] = "inst",
        ["Queue-Length"] = "queue",
        ["Queue-Outstanding"] = "qu",
        ["Queue-Completion-Outstanding"] = "qc",
        ["Active-Writers"] = "wr",
        ["Write-Queue"] = "wq",
        ["Active-Readers"] = "ar",
        ["Manager"] = "mgr",
        ["Local-CPU"] = "Local-CPU",
    };

    /// <summary>Reads one message. Never throws; an empty or unreadable input gives a report of kind <see cref="RedisErrorKind.Unknown"/> with no fields.</summary>
    public static RedisErrorReport Read(string? text)
    {
        try
        {
            return ReadCore(text ?? string.Empty);
        }
#pragma warning disable CA1031 // the contract is "never throws": a reader bug must cost one message, not the caller
        catch (Exception)
#pragma warning restore CA1031
        {
            return new RedisErrorReport(RedisErrorKind.Unknown, string.Empty, null, null, null, null, null, null, false, null, [], []);
        }
    }

    /// <summary>
    /// Reads a caught exception: its message text, with the structured <c>Exception.Data["Redis-..."]</c>
    /// values taking precedence where present (they are exact where the text may be cut).
    /// </summary>
    public static RedisErrorReport Read(Exception exception)
    {
        ArgumentNullException.ThrowIfNull(exception);
        var fromText = Read(exception.Message);
        try
        {
            return MergeData(fromText, exception.GetType().FullName, exception.Data);
        }
#pragma warning disable CA1031 // Exception.Data is app-mutable; a strange entry must not lose the text reading
        catch (Exception)
#pragma warning restore CA1031
        {
            return fromText;
        }
    }

    /// <summary>True for names the client writes as field keys: a letter, then letters, digits, '-' or '_'.</summary>
    internal static bool IsFieldName(ReadOnlySpan<char> name)
    {
        if (name.IsEmpty || name.Length > MaxKeyLength || !char.IsAsciiLetter(name[0]))
        {
            return false;
        }

        foreach (var c in name)
        {
            if (!char.IsAsciiLetterOrDigit(c) && c != '-' && c != '_')
            {
                return false;
            }
        }

        return true;
    }

    private static RedisErrorReport ReadCore(string input)
    {
        if (input.Length > MaxInputChars)
        {
            input = input[..MaxInputChars];
        }

        var text = Normalize(input);
        var builder = new ReportBuilder { Text = text.Length > MaxKeptTextChars ? text[..MaxKeptTextChars] : text };

        const string theftMarker = "possible thread-theft indicated";
        var theft = text.IndexOf(theftMarker, StringComparison.OrdinalIgnoreCase);
        if (theft >= 0)
        {
            builder.ThreadTheft = true;
            text = RemoveThreadTheftMarker(text, theft);
        }

        var (headerAt, kind, anchor) = FindHeader(text);
        builder.Kind = kind;
        builder.ExceptionType = FindExceptionType(headerAt >= 0 ? text[..headerAt] : text);

        string rest;
        if (headerAt < 0)
        {
            rest = text;
        }
        else
        {
            var afterAnchor = text[(headerAt + anchor.Length)..];
            rest = kind switch
            {
                RedisErrorKind.SyncTimeout => ReadSyncHeader(afterAnchor, builder),
                RedisErrorKind.AsyncTimeout => ReadAsyncHeader(afterAnchor, builder),
                RedisErrorKind.BacklogTimeout => ReadBacklogHeader(afterAnchor, builder),
                RedisErrorKind.NoConnection => ReadNoConnectionHeader(afterAnchor, builder),
                RedisErrorKind.ConnectionFailure when anchor.Length == 0 => ReadFailureHeader(afterAnchor, builder),
                _ => afterAnchor,
            };
        }

        ReadFields(rest, builder);
        return builder.Build();
    }

    /// <summary>
    /// Drops stack-trace lines and joins the rest: a break between two word characters was a wrap
    /// inside a token; a break before <c>key:</c> separated two fields.
    /// </summary>
    private static string Normalize(string input)
    {
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

    private static bool StartsWithFieldName(string line)
    {
        var i = 0;
        while (i < line.Length && i <= MaxKeyLength && (char.IsAsciiLetterOrDigit(line[i]) || line[i] is '-' or '_'))
        {
            i++;
        }

        return i > 0 && i < line.Length && (line[i] == ':' || line[i] == '=') && IsFieldName(line.AsSpan(0, i))
            && !line.AsSpan(i).StartsWith("://", StringComparison.Ordinal);
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

    private static (int At, RedisErrorKind Kind, string Anchor) FindHeader(string text)
    {
        var best = (At: -1, Kind: RedisErrorKind.Unknown, Anchor: string.Empty);
        foreach (var (anchor, kind) in Headers)
        {
            var at = text.IndexOf(anchor, StringComparison.OrdinalIgnoreCase);
            if (at >= 0 && (best.At < 0 || at < best.At))
            {
                best = (at, kind, anchor);
            }
        }

        if (best.At < 0 && TryFindConnectionFailureHeader(text, out var failureAt))
        {
            return (failureAt, RedisErrorKind.ConnectionFailure, string.Empty);
        }

        return best;
    }

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

    private static string? FindExceptionType(string prefix)
    {
        // The last token ending in "Exception" that mentions Redis, e.g. "StackExchange.Redis.RedisTimeoutException:".
        var end = prefix.LastIndexOf("Exception", StringComparison.Ordinal);
        while (end >= 0)
        {
            var stop = end + "Exception".Length;
            var start = end;
            while (start > 0 && (char.IsAsciiLetterOrDigit(prefix[start - 1]) || prefix[start - 1] is '.' or '_'))
            {
                start--;
            }

            var name = prefix[start..stop];
            if (name.Contains("Redis", StringComparison.Ordinal) && name.Length <= 120)
            {
                return name;
            }

            end = end == 0 ? -1 : prefix.LastIndexOf("Exception", end - 1, StringComparison.Ordinal);
        }

        return null;
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

            var close = remainder.IndexOf("ms)", open, StringComparison.Ordinal);
            if (close > open && FieldValue.ParseNumber(remainder[(open + 2)..close]) is { } ms
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
                && FieldValue.ParseNumber(part[..^" elapsed".Length]) is { } elapsed)
            {
                builder.ElapsedMilliseconds = elapsed;
                builder.AddField("elapsed", FieldValue.FromNumber(part, elapsed));
            }
            else if (part.StartsWith("timeout is ", StringComparison.OrdinalIgnoreCase)
                && FieldValue.ParseNumber(part["timeout is ".Length..]) is { } timeout)
            {
                builder.TimeoutMilliseconds = timeout;
                builder.AddField("timeout", FieldValue.FromNumber(part, timeout));
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
            var timeoutClose = header.IndexOf("ms)", timeoutOpen, StringComparison.Ordinal);
            if (timeoutClose > 0 && FieldValue.ParseNumber(header[(timeoutOpen + 2)..timeoutClose]) is { } ms)
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
        return !char.IsAsciiDigit(next) && StartsWithFieldName(text[(at + 1)..Math.Min(text.Length, at + 2 + MaxKeyLength)]);
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

    private static RedisErrorReport MergeData(RedisErrorReport fromText, string? exceptionType, IDictionary data)
    {
        if (data.Count == 0)
        {
            return fromText.ExceptionType is null && exceptionType is not null ? WithType(fromText, exceptionType) : fromText;
        }

        var builder = ReportBuilder.From(fromText);
        builder.ExceptionType = exceptionType ?? fromText.ExceptionType;
        foreach (DictionaryEntry entry in data)
        {
            if (entry.Key is not string key || entry.Value is null)
            {
                continue;
            }

            var value = Convert.ToString(entry.Value, System.Globalization.CultureInfo.InvariantCulture) ?? string.Empty;
            if (string.Equals(key, "redis-command", StringComparison.OrdinalIgnoreCase))
            {
                var space = value.IndexOf(' ', StringComparison.Ordinal);
                builder.SetCommand(space < 0 ? value : value[..space]);
            }
            else if (string.Equals(key, "redis-server", StringComparison.OrdinalIgnoreCase))
            {
                builder.SetEndpoint(value);
            }
            else if (key.StartsWith("Redis-", StringComparison.OrdinalIgnoreCase)
                && DataKeyToField.TryGetValue(key["Redis-".Length..], out var field))
            {
                builder.SetField(field, FieldValue.Parse(value));
            }
        }

        return builder.Build();
    }

    private static RedisErrorReport WithType(RedisErrorReport report, string exceptionType)
    {
        var builder = ReportBuilder.From(report);
        builder.ExceptionType = exceptionType;
        return builder.Build();
    }

    /// <summary>Collects a report while reading; keeps the first value of a repeated key.</summary>
    private sealed class ReportBuilder
    {
        private readonly List<KeyValuePair<string, FieldValue>> _fields = [];
        private readonly List<string> _notes = [];
        private string? _command;
        private string? _key;
        private string? _endpoint;

        public RedisErrorKind Kind { get; set; }

        public string Text { get; set; } = string.Empty;

        public string? ExceptionType { get; set; }

        public double? TimeoutMilliseconds { get; set; }

        public double? ElapsedMilliseconds { get; set; }

        public bool ThreadTheft { get; set; }

        public string? FailureType { get; set; }

        public int FieldCount => _fields.Count;

        public static ReportBuilder From(RedisErrorReport report)
        {
            var builder = new ReportBuilder
            {
                Kind = report.Kind,
                Text = report.Text,
                ExceptionType = report.ExceptionType,
                TimeoutMilliseconds = report.TimeoutMilliseconds,
                ElapsedMilliseconds = report.ElapsedMilliseconds,
                ThreadTheft = report.ThreadTheftIndicated,
                FailureType = report.FailureType,
                _command = report.Command,
                _key = report.Key,
                _endpoint = report.Endpoint,
            };
            builder._fields.AddRange(report.Fields);
            builder._notes.AddRange(report.Notes);
            return builder;
        }

        public void SetCommand(string text)
        {
            var command = text.Trim().ToUpperInvariant();
            if (command.Length is > 0 and <= 40 && command.All(c => char.IsAsciiLetterOrDigit(c) || c is '.' or '_' or '-' or '|'))
            {
                _command = command;
            }
        }

        public void SetKey(string text)
        {
            var key = text.Trim();
            _key = key.Length == 0 ? null : key.Length > 512 ? key[..512] : key;
        }

        public void SetEndpoint(string text)
        {
            var endpoint = text.Trim();
            if (endpoint.StartsWith("Unspecified/", StringComparison.Ordinal))
            {
                endpoint = endpoint["Unspecified/".Length..];
            }

            var slash = endpoint.IndexOf('/', StringComparison.Ordinal);
            if (slash > 0)
            {
                endpoint = endpoint[..slash];
            }

            var colon = endpoint.LastIndexOf(':');
            if (endpoint.Length is > 2 and <= 100 && colon > 0 && colon < endpoint.Length - 1
                && endpoint.AsSpan(colon + 1).ContainsAnyExceptInRange('0', '9') is false
                && endpoint.All(c => char.IsAsciiLetterOrDigit(c) || c is '.' or '-' or '_' or ':' or '[' or ']'))
            {
                _endpoint = endpoint;
            }
        }

        public void AddNote(string note)
        {
            if (note.Length > 0 && _notes.Count < MaxNotes)
            {
                _notes.Add(note.Length > 1024 ? note[..1024] : note);
                if (Kind is RedisErrorKind.ConnectionFailure or RedisErrorKind.NoConnection or RedisErrorKind.BacklogTimeout && FailureType is null)
                {
                    ReadFailureHeader(note);
                }
            }
        }

        public void AddField(string name, FieldValue value)
        {
            foreach (var (existing, _) in _fields)
            {
                if (string.Equals(existing, name, StringComparison.Ordinal))
                {
                    return;
                }
            }

            _fields.Add(new(name, value));
        }

        public void SetField(string name, FieldValue value)
        {
            for (var i = 0; i < _fields.Count; i++)
            {
                if (string.Equals(_fields[i].Key, name, StringComparison.Ordinal))
                {
                    _fields[i] = new(name, value);
                    return;
                }
            }

            _fields.Add(new(name, value));
        }

        public RedisErrorReport Build()
        {
            var endpoint = _endpoint;
            var command = _command;
            if (endpoint is null && FieldText("serverEndpoint") is { } fromField)
            {
                SetEndpoint(fromField);
                endpoint = _endpoint;
            }

            if (command is null && FieldText("command") is { } commandField)
            {
                SetCommand(commandField);
                command = _command;
            }

            if (TimeoutMilliseconds is null && FieldText("timeout") is { } timeoutField)
            {
                TimeoutMilliseconds = FieldValue.ParseNumber(timeoutField);
            }

            return new RedisErrorReport(
                Kind, Text, ExceptionType, command, _key, endpoint, TimeoutMilliseconds, ElapsedMilliseconds,
                ThreadTheft, FailureType, _notes.ToArray(), [.. _fields]);
        }

        private string? FieldText(string name)
        {
            foreach (var (key, value) in _fields)
            {
                if (string.Equals(key, name, StringComparison.Ordinal))
                {
                    return value.Raw;
                }
            }

            return null;
        }

        /// <summary><c>SocketFailure (ReadSocketError/ConnectionReset) on host:6379/Interactive</c>.</summary>
        private void ReadFailureHeader(string note)
        {
            var on = note.IndexOf(" on ", StringComparison.Ordinal);
            if (on <= 0)
            {
                return;
            }

            // "SocketFailure (ReadSocketError/...) on" or "...server(s). UnableToConnect on": the word before " on ".
            var type = note[..on];
            var paren = type.IndexOf(" (", StringComparison.Ordinal);
            type = paren > 0 ? type[..paren] : type;
            type = type[(type.LastIndexOf(' ') + 1)..];
            if (IsFieldName(type))
            {
                FailureType = type;
            }

            // "on host:6379/Interactive" names the endpoint; 1.x's short "SocketClosed on GET" names the command.
            var target = note[(on + 4)..];
            var end = target.IndexOfAny([' ', ',']);
            var word = end < 0 ? target : target[..end];
            if (word.Contains(':', StringComparison.Ordinal))
            {
                SetEndpoint(word);
            }
            else if (_command is null)
            {
                SetCommand(word);
                if (end > 0 && _key is null)
                {
                    SetKey(target[(end + 1)..]);
                }
            }
        }
    }
}
