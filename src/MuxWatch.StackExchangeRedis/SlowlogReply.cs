using System.Globalization;
using MuxWatch.Model;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// Reads a <c>SLOWLOG GET</c> reply entry by entry, dropping each one whose figures cannot be believed with a reason.
/// </summary>
/// <remarks>
/// Written by hand because the client's typed call (<c>SlowlogGetAsync</c>) converts every entry while it reads the
/// reply: one timestamp past year 9999 throws for the whole reply (<c>ArgumentOutOfRangeException</c>), so one
/// absurd entry failed every poll of its server, and a duration past what a <see cref="TimeSpan"/> holds wraps
/// silently. The elements are still read with the client's own conversions (<see cref="RedisResult"/>).
/// </remarks>
internal static class SlowlogReply
{
    /// <summary>The earliest timestamp believed: no Redis with a slow log ran before 2000.</summary>
    internal static readonly DateTimeOffset Earliest = new(2000, 1, 1, 0, 0, 0, TimeSpan.Zero);

    /// <summary>The latest timestamp believed, however wrong a server's clock: 2100.</summary>
    internal static readonly DateTimeOffset Latest = new(2100, 1, 1, 0, 0, 0, TimeSpan.Zero);

    /// <summary>The longest duration believed: 30 days (a DEBUG SLEEP can be long; a negative or an astronomical one is not).</summary>
    internal const long MaxDurationMicros = 30L * 24 * 3600 * 1_000_000;

    /// <summary>How many reasons one poll keeps (the count of dropped entries is in each).</summary>
    internal const int MaxReasons = 8;

    /// <summary>The longest client name or client address kept, in characters: a hostile server's megabyte stays a line.</summary>
    internal const int MaxTextLength = 64;

    /// <summary>The longest argument kept: Redis's own bound for a slow-log argument (128 bytes), so that a key it shows whole is kept whole and can be measured.</summary>
    internal const int MaxArgumentLength = 128;

    /// <summary>What an argument that may carry a secret reads as.</summary>
    internal const string Redacted = "(redacted)";

    /// <summary>
    /// Commands whose arguments can carry a password or a key to another server: their first argument is never shown.
    /// (Redis redacts some of them in its own slow log since 7.0; older servers and forks do not.)
    /// </summary>
    private static readonly HashSet<string> SecretCommands = new(StringComparer.OrdinalIgnoreCase) { "AUTH", "HELLO", "MIGRATE", "ACL", "SENTINEL" };

    /// <summary>
    /// The entries of <paramref name="reply"/>, at most <paramref name="limit"/> (more is an oversized reply), those that cannot
    /// be believed left out and said in <paramref name="dropped"/>; <paramref name="knownAs"/> names a sender by its client name
    /// when it is a connection MuxWatch knows, and <paramref name="multiplexerOf"/> the one watched multiplexer it is.
    /// </summary>
    public static List<SlowlogEntry> Read(RedisResult reply, int limit, List<string> dropped, Func<string?, string?>? knownAs = null, Func<string?, string?>? multiplexerOf = null)
    {
        RedisResult[] items;
        try
        {
            items = (RedisResult[]?)reply ?? [];
        }
        catch (InvalidCastException)
        {
            Drop(dropped, "the slow log's reply was not a list of entries; it was dropped");
            return [];
        }

        if (items.Length > limit)
        {
            throw new OversizedReplyException("SLOWLOG GET", items.Length, limit);
        }

        var entries = new List<SlowlogEntry>(items.Length);
        foreach (var item in items)
        {
            if (Entry(item, dropped, knownAs, multiplexerOf) is { } entry)
            {
                entries.Add(entry);
            }
        }

        return entries;
    }

    private static SlowlogEntry? Entry(RedisResult item, List<string> dropped, Func<string?, string?>? knownAs, Func<string?, string?>? multiplexerOf)
    {
        long id, timestamp, duration;
        RedisResult[] arguments;
        string? address = null, clientName = null;
        try
        {
            var parts = (RedisResult[]?)item;
            if (parts is not { Length: >= 4 })
            {
                Drop(dropped, "a slow-log entry without its id, time, duration and command was dropped");
                return null;
            }

            id = (long)parts[0];
            timestamp = (long)parts[1];
            duration = (long)parts[2];
            arguments = (RedisResult[]?)parts[3] ?? [];
            if (parts.Length >= 6)
            {
                // Redis 4.0 and later: who sent it (its address, and its name when it set one).
                (address, clientName) = Client(parts[4], parts[5]);
            }
        }
        catch (Exception ex) when (ex is InvalidCastException or FormatException or OverflowException)
        {
            Drop(dropped, "a slow-log entry whose id, time or duration is not a number was dropped");
            return null;
        }

        if (id < 0)
        {
            Drop(dropped, Invariant($"slow-log entry #{id}: a negative id cannot be believed; dropped"));
            return null;
        }

        if (timestamp < Earliest.ToUnixTimeSeconds() || timestamp > Latest.ToUnixTimeSeconds())
        {
            Drop(dropped, Invariant($"slow-log entry #{id}: a timestamp of {timestamp} s (unix time) cannot be believed; dropped"));
            return null;
        }

        if (duration is < 0 or > MaxDurationMicros)
        {
            Drop(dropped, Invariant($"slow-log entry #{id}: a duration of {duration} µs cannot be believed; dropped"));
            return null;
        }

        var command = CommandName(arguments);
        return new SlowlogEntry(id, DateTimeOffset.FromUnixTimeSeconds(timestamp), TimeSpan.FromTicks(duration * 10), command)
        {
            Argument = FirstArgument(command, arguments),
            ClientAddress = address,
            ClientName = clientName,
            SentBy = knownAs?.Invoke(clientName),
            SentByMultiplexer = multiplexerOf?.Invoke(clientName),
        };
    }

    /// <summary>The sender's address and name; neither when the server sent something else than text there (the rest of the entry stands).</summary>
    private static (string? Address, string? Name) Client(RedisResult address, RedisResult name)
    {
        try
        {
            return (Text((string?)address), Text((string?)name));
        }
        catch (InvalidCastException)
        {
            return (null, null);
        }
    }

    /// <summary>
    /// The first argument only (a key, a subcommand, a pattern), never the rest: redacted for commands that carry
    /// secrets, bounded, and readable (control characters replaced). Null when the command had none.
    /// </summary>
    private static string? FirstArgument(string command, RedisResult[] arguments)
    {
        if (arguments.Length < 2)
        {
            return null;
        }

        if (SecretCommands.Contains(command))
        {
            return Redacted;
        }

        try
        {
            return Text((string?)arguments[1], MaxArgumentLength);
        }
        catch (InvalidCastException)
        {
            return null;
        }
    }

    /// <summary>
    /// A server's text as one bounded, readable line: control and formatting characters (newlines, bidirectional
    /// overrides) become '?', and more than <paramref name="max"/> characters end in '…'. Null when empty.
    /// </summary>
    internal static string? Text(string? value, int max = MaxTextLength)
    {
        if (string.IsNullOrEmpty(value))
        {
            return null;
        }

        var length = Math.Min(value.Length, max);
        var text = new System.Text.StringBuilder(length + 1);
        for (var i = 0; i < length; i++)
        {
            var c = value[i];
            text.Append(char.IsControl(c) || char.IsSurrogate(c) || CharUnicodeInfo.GetUnicodeCategory(c) == UnicodeCategory.Format ? '?' : c);
        }

        return value.Length > max ? text.Append('…').ToString() : text.ToString();
    }

    private static void Drop(List<string> dropped, string reason)
    {
        if (dropped.Count < MaxReasons)
        {
            dropped.Add(reason);
        }
    }

    /// <summary>The command name only, never an argument; bounded, and only name characters (a renamed command can be anything).</summary>
    private static string CommandName(RedisResult[] arguments)
    {
        string? first;
        try
        {
            first = arguments.Length > 0 ? (string?)arguments[0] : null;
        }
        catch (InvalidCastException)
        {
            first = null;
        }

        var name = new string([.. (first ?? "?").Take(32).Where(c => char.IsAsciiLetterOrDigit(c) || c is '_' or '-' or '.' or '|')]);
        return name.Length == 0 ? "?" : name.ToUpperInvariant();
    }

    private static string Invariant(FormattableString text) => text.ToString(CultureInfo.InvariantCulture);
}
