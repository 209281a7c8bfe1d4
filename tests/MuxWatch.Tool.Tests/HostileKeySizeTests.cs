using System.Globalization;
using System.Text;
using System.Text.Json;
using MuxWatch.Testing;

namespace MuxWatch.Tool.Tests;

/// <summary>
/// Issue 38, the new surface of issue 40: asking a server how large the huge key is (<c>MEMORY USAGE</c>). A server
/// that answers it with garbage or an error gets its answer said as the reason there is no size, the rest of the
/// diagnosis standing; a key too long to have been shown whole (a megabyte, cut by the slow log) is never asked about.
/// </summary>
public sealed class HostileKeySizeTests
{
    private static readonly long LoggedAt = DateTimeOffset.UtcNow.ToUnixTimeSeconds();

    /// <summary>A slow log with one GET of <paramref name="key"/> that ran 1.5 s, logged now.</summary>
    private static byte[] Slowlog(string key) => Encoding.UTF8.GetBytes(string.Create(CultureInfo.InvariantCulture,
        $"*1\r\n*6\r\n:4\r\n:{LoggedAt}\r\n:1500000\r\n*2\r\n$3\r\nGET\r\n${Encoding.UTF8.GetByteCount(key)}\r\n{key}\r\n$15\r\n127.0.0.1:50000\r\n$3\r\napp\r\n"));

    /// <summary>A 2.x timeout of a small GET queued behind 900 KB of reply (no next: field naming a key), caught half a second after the slow GET was logged.</summary>
    private static async Task<JsonElement> PostAndSettleAsync(InMemorySidecar sidecar, string endpoint)
    {
        var message = $"Timeout performing GET cart:small (1000ms), inst: 0, qu: 0, qs: 2, aw: False, rs: ReadAsync, ws: Idle, in: 900000, in-pipe: 0, serverEndpoint: {endpoint}, mc: 1/1/0, IOCP: (Busy=0,Free=1000,Min=2,Max=1000), WORKER: (Busy=1,Free=32766,Min=2,Max=32767), v: 2.6.90.64945";
        var line = JsonSerializer.Serialize(new { message, time = DateTimeOffset.FromUnixTimeSeconds(LoggedAt).AddSeconds(0.5) });
        using (var response = await sidecar.Client.PostAsync(new Uri("/api/timeouts", UriKind.Relative), new StringContent(line, Encoding.UTF8, "application/x-ndjson")))
        {
            response.EnsureSuccessStatusCode();
        }

        // Found by its endpoint: the in-memory sidecar's catcher also records timeouts other tests of this process throw.
        JsonElement settled = default;
        await Eventually.UntilAsync(async () =>
        {
            using var listed = JsonDocument.Parse(await sidecar.Client.GetStringAsync(new Uri("/api/timeouts?limit=1000", UriKind.Relative)));
            var posted = listed.RootElement.GetProperty("timeouts").EnumerateArray().Where(t => t.GetProperty("endpoint").GetString() == endpoint).ToList();
            settled = posted.Count == 1 ? posted[0].Clone() : default;
            return settled.ValueKind == JsonValueKind.Object && settled.GetProperty("settled").GetBoolean();
        }, "the posted timeout settled", TimeSpan.FromSeconds(45));
        return settled;
    }

    private static List<string> Lines(JsonElement timeout) => [.. timeout.GetProperty("evidence").EnumerateArray().Select(e => e.GetString()!)];

    [Theory]
    [InlineData("a bulk string", "MEMORY USAGE answered something other than a size")]
    [InlineData("an error", "the server refused MEMORY USAGE: ERR no such thing")]
    [InlineData("a negative size", "MEMORY USAGE answered a negative size")]
    public async Task A_key_size_answered_with_garbage_is_said_as_the_reason_and_the_diagnosis_stands(string what, string reason)
    {
        var reply = what switch
        {
            "a bulk string" => HostileRedis.Bulk(new string('x', 100_000)),
            "an error" => HostileRedis.Error("ERR no such thing"),
            _ => ":-5\r\n"u8.ToArray(),
        };
        await using var hostile = HostileRedis.Start(command => command switch
        {
            ["SLOWLOG", "GET", ..] => Slowlog("cart:9f3"),
            ["MEMORY", "USAGE", ..] => reply,
            _ => null,
        });
        await using var sidecar = InMemorySidecar.Probing(("hostile", hostile.EndPoint));
        await Eventually.UntilAsync(async () => (await MetricsText.ScrapeAsync(sidecar.Client)).Value("muxwatch_server_last_poll_success_timestamp_seconds") > 0, "the first complete poll");

        var timeout = await PostAndSettleAsync(sidecar, hostile.EndPoint);

        Assert.Equal("large-payload", timeout.GetProperty("cause").GetString());
        Assert.Contains($"large-payload: the huge value is cart:9f3 (the slow log's GET, #4) (its size unknown: {reason})", Lines(timeout));
        Assert.Equal(JsonValueKind.Null, (await PollingAsync(sidecar, hostile.EndPoint)).GetProperty("lastPollError").ValueKind); // the polls stood
    }

    [Fact]
    public async Task A_key_size_answered_slowly_is_said_unanswered_and_polling_goes_on()
    {
        // MEMORY USAGE answered after 3 s, past the poll's timeout (1 s): the reason is said, and later polls read the server again.
        await using var hostile = HostileRedis.Start(
            command => command is ["SLOWLOG", "GET", ..] ? Slowlog("cart:9f3") : command is ["MEMORY", "USAGE", ..] ? ":1000\r\n"u8.ToArray() : null,
            command => command is ["MEMORY", ..] ? TimeSpan.FromSeconds(3) : TimeSpan.Zero);
        await using var sidecar = InMemorySidecar.Probing(("hostile", hostile.EndPoint));
        await Eventually.UntilAsync(async () => (await MetricsText.ScrapeAsync(sidecar.Client)).Value("muxwatch_server_last_poll_success_timestamp_seconds") > 0, "the first complete poll");

        var timeout = await PostAndSettleAsync(sidecar, hostile.EndPoint);

        Assert.Contains("large-payload: the huge value is cart:9f3 (the slow log's GET, #4) (its size unknown: MEMORY USAGE was not answered within the poll's timeout)", Lines(timeout));
        var answeredAfter = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() / 1000.0;
        await Eventually.UntilAsync(async () => (await MetricsText.ScrapeAsync(sidecar.Client)).Value("muxwatch_server_last_poll_success_timestamp_seconds") > answeredAfter,
            "a poll reading the server again", TimeSpan.FromSeconds(30));
    }

    [Fact]
    public async Task A_key_the_slow_log_cut_short_is_never_asked_about()
    {
        var memoryAsked = 0;
        await using var hostile = HostileRedis.Start(command =>
        {
            if (command is ["MEMORY", ..])
            {
                Interlocked.Increment(ref memoryAsked);
            }

            return command is ["SLOWLOG", "GET", ..] ? Slowlog(new string('k', 1 << 20)) : null;
        });
        await using var sidecar = InMemorySidecar.Probing(("hostile", hostile.EndPoint));
        await Eventually.UntilAsync(async () => (await MetricsText.ScrapeAsync(sidecar.Client)).Value("muxwatch_server_last_poll_success_timestamp_seconds") > 0, "the first complete poll");

        var timeout = await PostAndSettleAsync(sidecar, hostile.EndPoint);

        Assert.Equal("large-payload", timeout.GetProperty("cause").GetString());
        Assert.DoesNotContain(Lines(timeout), line => line.Contains("the huge value is", StringComparison.Ordinal));
        Assert.Equal(0, Volatile.Read(ref memoryAsked));
        Assert.True(timeout.GetRawText().Length < 16_384, "a megabyte key must not make a megabyte answer");
    }

    private static async Task<JsonElement> PollingAsync(InMemorySidecar sidecar, string endpoint)
    {
        using var events = JsonDocument.Parse(await sidecar.Client.GetStringAsync(new Uri($"/api/events?endpoint={endpoint}", UriKind.Relative)));
        return events.RootElement.GetProperty("endpoints")[0].GetProperty("polling").Clone();
    }
}
