using System.Buffers.Text;
using System.Globalization;
using System.Text;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis.Doctor;

/// <summary>
/// Reads one server for the doctor, read-only, every command within what is left of one deadline: <c>INFO</c>, a few
/// <c>CONFIG GET</c>s, <c>SLOWLOG GET 128</c>, <c>LATENCY LATEST</c>, <c>CLIENT LIST</c>. A command refused (an ACL,
/// a renamed command), unanswered or answered with nonsense is noted as unread and the others go on; every reply is
/// bounded before it is kept.
/// </summary>
internal sealed class DoctorReader(IServer server, DateTimeOffset deadline, TimeProvider time, CancellationToken cancellation)
{
    /// <summary>The slow-log entries read: as many as a busy server keeps by default.</summary>
    private const int SlowlogEntries = 128;

    /// <summary>The longest <c>CLIENT LIST</c> read (about 50,000 clients); a longer one is not read.</summary>
    private const int MaxClientListChars = 16 * 1024 * 1024;

    /// <summary>The longest latency event believed, in ms: an hour.</summary>
    private const int MaxLatencyMs = 3_600_000;

    /// <summary>The settings read, each a stall's cause or a figure the findings need.</summary>
    private static readonly string[] Settings = ["save", "appendonly", "appendfsync", "latency-monitor-threshold", "slowlog-log-slower-than", "maxmemory", "repl-diskless-sync"];

    public async Task<DoctorReadings> ReadAsync()
    {
        var read = new DoctorReadings();
        read.Info = await AskAsync(read, "INFO", async () =>
        {
            var text = await server.InfoRawAsync().ConfigureAwait(false) ?? string.Empty;
            return text.Length <= ReplyLimits.MaxInfoChars
                ? ReplyLimits.ParseInfo(text, new Dictionary<string, string>(StringComparer.Ordinal))
                : throw new OversizedReplyException("INFO", text.Length, ReplyLimits.MaxInfoChars);
        }).ConfigureAwait(false);

        foreach (var setting in Settings)
        {
            var pairs = await AskAsync(read, $"CONFIG GET {setting}", () => server.ConfigGetAsync(setting)).ConfigureAwait(false);
            if (pairs is null)
            {
                break; // refused once (an ACL without CONFIG): the rest would be refused too
            }

            foreach (var (key, value) in pairs.Where(p => p.Key == setting).Take(1))
            {
                read.Config[key] = SlowlogReply.Text(value, ReplyLimits.MaxInfoFieldChars) ?? string.Empty;
            }
        }

        var dropped = new List<string>();
        read.Slowlog = await AskAsync(read, "SLOWLOG GET", async () =>
            SlowlogReply.Read(await server.ExecuteAsync("SLOWLOG", "GET", SlowlogEntries).ConfigureAwait(false), SlowlogEntries, dropped)).ConfigureAwait(false);
        read.Unread.AddRange(dropped.Select(reason => $"SLOWLOG GET: {reason}"));

        read.Latency = await AskAsync(read, "LATENCY LATEST", async () =>
        {
            var latest = await server.LatencyLatestAsync().ConfigureAwait(false);
            if (latest.Length > ReplyLimits.MaxLatencyEntries)
            {
                throw new OversizedReplyException("LATENCY LATEST", latest.Length, ReplyLimits.MaxLatencyEntries);
            }

            var believed = latest.Where(e => e.DurationMilliseconds is >= 0 and <= MaxLatencyMs && e.MaxDurationMilliseconds is >= 0 and <= MaxLatencyMs).ToList();
            if (believed.Count < latest.Length)
            {
                read.Unread.Add(string.Create(CultureInfo.InvariantCulture, $"LATENCY LATEST: {latest.Length - believed.Count} event(s) with a negative or astronomical time cannot be believed; left out"));
            }

            return believed.Select(e => (SlowlogReply.Text(e.EventName) ?? "?", (long)e.DurationMilliseconds, (long)e.MaxDurationMilliseconds)).ToList();
        }).ConfigureAwait(false);

        read.Clients = await AskAsync(read, "CLIENT LIST", async () =>
        {
            var text = (byte[]?)await server.ExecuteAsync("CLIENT", "LIST").ConfigureAwait(false) ?? [];
            return text.Length <= MaxClientListChars ? ClientsWithOutput(text) : throw new OversizedReplyException("CLIENT LIST", text.Length, MaxClientListChars);
        }).ConfigureAwait(false);
        return read;
    }

    /// <summary>
    /// <c>CLIENT LIST</c>'s clients that have replies waiting in their output buffer (<c>omem</c> above 0), read field by
    /// field from the reply's bytes: only those clients' three fields become strings (a 16 MB list split into strings,
    /// line by line and field by field, took over 300 MB and ran the process out of its heap).
    /// </summary>
    private static List<(string Address, string? Name, long OutputBytes, string? Command)> ClientsWithOutput(ReadOnlySpan<byte> text)
    {
        var found = new List<(string, string?, long, string?)>();
        foreach (var lineRange in text.Split((byte)'\n'))
        {
            var line = text[lineRange].TrimEnd((byte)'\r');
            ReadOnlySpan<byte> address = default, name = default, command = default;
            long bytes = 0;
            foreach (var fieldRange in line.Split((byte)' '))
            {
                var field = line[fieldRange];
                var equals = field.IndexOf((byte)'=');
                if (equals <= 0)
                {
                    continue;
                }

                var key = field[..equals];
                var value = field[(equals + 1)..];
                if (key.SequenceEqual("omem"u8) && bytes == 0)
                {
                    bytes = Utf8Parser.TryParse(value, out long omem, out var used) && used == value.Length && omem > 0 ? omem : -1;
                }
                else if (key.SequenceEqual("addr"u8) && address.IsEmpty)
                {
                    address = value;
                }
                else if (key.SequenceEqual("name"u8) && name.IsEmpty)
                {
                    name = value;
                }
                else if (key.SequenceEqual("cmd"u8) && command.IsEmpty)
                {
                    command = value;
                }
            }

            if (bytes > 0)
            {
                found.Add((Field(address) ?? "?", Field(name), bytes, Field(command)));
            }
        }

        return found;
    }

    private static string? Field(ReadOnlySpan<byte> value) => value.IsEmpty ? null : SlowlogReply.Text(Encoding.UTF8.GetString(value[..Math.Min(value.Length, 256)]));

    /// <summary>One read within what is left of the deadline; null (and why, in <see cref="DoctorReadings.Unread"/>) when it could not be had.</summary>
    private async Task<T?> AskAsync<T>(DoctorReadings read, string what, Func<Task<T>> ask)
        where T : class
    {
        var left = deadline - time.GetUtcNow();
        if (left <= TimeSpan.Zero)
        {
            read.Unread.Add($"{what}: not asked, the timeout was spent");
            return null;
        }

        try
        {
            return await ask().WaitAsync(left, time, cancellation).ConfigureAwait(false);
        }
        catch (RedisServerException ex)
        {
            read.Unread.Add($"{what}: refused ({Said(ex.Message)})");
        }
        catch (RedisCommandException ex)
        {
            read.Unread.Add($"{what}: the client would not send it ({Said(ex.Message)})");
        }
        catch (Exception ex) when (ex is TimeoutException or RedisTimeoutException)
        {
            read.Unread.Add($"{what}: no answer within the timeout");
        }
        catch (RedisConnectionException ex)
        {
            read.Unread.Add($"{what}: the connection failed ({ex.FailureType})");
        }
        catch (OversizedReplyException ex)
        {
            read.Unread.Add($"{what}: the reply was {ex.Size:N0} long, over the {ex.Limit:N0} read");
        }
        catch (Exception ex) when (ex is InvalidCastException or FormatException or OverflowException or ArgumentException or IndexOutOfRangeException)
        {
            read.Unread.Add($"{what}: its reply made no sense ({ex.GetType().Name})");
        }

        return null;
    }

    /// <summary>A server's words, bounded and on one line (it may be hostile).</summary>
    private static string Said(string message) => SlowlogReply.Text(message, 160) ?? string.Empty;
}
