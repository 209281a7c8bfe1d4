using System.Globalization;
using System.Text;
using System.Text.Json;
using MuxWatch.Testing;

namespace MuxWatch.Tool.Tests;

/// <summary>
/// Issue 38, #2: a slow-log entry with an absurd duration or timestamp failed every poll of its server
/// (<c>ArgumentOutOfRangeException</c>), and the server's persistence, replication and memory series went
/// missing for as long as the entry stayed in the slow log. Such a value is dropped with a reason a user can
/// read; the rest of the poll stands.
/// </summary>
public sealed class ImplausibleSlowlogTests
{
    public static TheoryData<string, long, long> Entries() => new()
    {
        { "a timestamp far in the future", 99_999_999_999_999, 1_500 },
        { "a timestamp before 1970", -5, 1_500 },
        { "the largest timestamp", long.MaxValue, 1_500 },
        { "the largest duration", 1_700_000_000, long.MaxValue },
        { "a negative duration", 1_700_000_000, -1 },
    };

    [Theory]
    [MemberData(nameof(Entries))]
    public async Task An_implausible_slow_log_entry_is_dropped_with_a_reason_and_the_poll_stands(string what, long timestamp, long durationMicros)
    {
        var now = DateTimeOffset.UtcNow.ToUnixTimeSeconds();
        var slowlog = Encoding.ASCII.GetBytes(string.Create(CultureInfo.InvariantCulture,
            $"*2\r\n{Entry(2, timestamp, durationMicros, "KEYS")}{Entry(1, now, 250_000, "SMEMBERS")}"));
        await using var hostile = HostileRedis.Start(command => command is ["SLOWLOG", "GET", ..] ? slowlog : null);
        await using var sidecar = InMemorySidecar.Probing(("hostile", hostile.EndPoint));

        JsonElement endpoint = default;
        await Eventually.UntilAsync(async () =>
        {
            using var events = JsonDocument.Parse(await sidecar.Client.GetStringAsync(new Uri($"/api/events?endpoint={hostile.EndPoint}", UriKind.Relative)));
            endpoint = events.RootElement.GetProperty("endpoints")[0].Clone();
            return endpoint.GetProperty("polling").GetProperty("lastPollSuccess").ValueKind == JsonValueKind.String
                && endpoint.GetProperty("events").GetArrayLength() > 0;
        }, $"{what}: a poll that stands, with the plausible entry on the timeline");

        var polling = endpoint.GetProperty("polling");
        Assert.Equal(JsonValueKind.Null, polling.GetProperty("lastPollError").ValueKind);
        var kept = Assert.Single(endpoint.GetProperty("events").EnumerateArray());
        Assert.Equal("SMEMBERS", kept.GetProperty("command").GetString());
        var dropped = Assert.Single(polling.GetProperty("dropped").EnumerateArray()).GetString()!;
        Assert.Contains("slow-log entry #2", dropped, StringComparison.Ordinal);
        Assert.Contains("cannot be believed", dropped, StringComparison.Ordinal);

        // The rest of the poll: INFO's series are there, and the plausible entry counted.
        var metrics = await MetricsText.ScrapeAsync(sidecar.Client);
        Assert.Equal(0, metrics.Value("muxwatch_server_rdb_bgsave_in_progress", ("endpoint", hostile.EndPoint)));
        Assert.Equal(1, metrics.Value("muxwatch_server_rdb_last_bgsave_ok", ("endpoint", hostile.EndPoint)));
        Assert.Equal(0.25, metrics.Value("muxwatch_server_slowest_recent_command_seconds", ("endpoint", hostile.EndPoint)));
    }

    private static string Entry(long id, long timestamp, long durationMicros, string command) => string.Create(CultureInfo.InvariantCulture,
        $"*6\r\n:{id}\r\n:{timestamp}\r\n:{durationMicros}\r\n*1\r\n${command.Length}\r\n{command}\r\n$15\r\n127.0.0.1:50000\r\n$0\r\n\r\n");
}
