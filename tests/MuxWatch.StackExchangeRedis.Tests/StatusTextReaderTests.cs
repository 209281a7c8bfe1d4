using MuxWatch.StackExchangeRedis;
using MuxWatch.Testing;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis.Tests;

/// <summary>The GetStatus() figures, read from the texts each client version writes (measured), and pinned against the real package.</summary>
public sealed class StatusTextReaderTests
{
    private const string Layout2x = """
        17:05:25.4370: Endpoint Summary:
        17:05:25.4371:   127.0.0.1:16393: Standalone v7.0.15, primary; 16 databases; keep-alive: 00:01:00; int: ConnectedEstablished; sub: ConnectedEstablished, 1 active
        17:05:25.4371:   127.0.0.1:16393: int ops=112, qu=0, qs=51, qc=0, wr=0, socks=1; sub ops=3, qu=0, qs=0, qc=0, wr=0, subs=1, socks=1
        17:05:25.4371:   127.0.0.1:16393: Circular op-count snapshot; int: 0+112=112 (11.20 ops/s; spans 10s); sub: 0+3=3 (0.30 ops/s; spans 10s)
        17:05:25.4371: Sync timeouts: 1; async timeouts: 50; fire and forget: 0; last heartbeat: 0s ago
        """;

    private const string Layout3x = """
        17:05:39.0468: Endpoint Summary:
        17:05:39.0469: Server summary: 127.0.0.1:16393: Standalone v7.0.15, primary; 16 databases; keep-alive: 00:01:00; int: ConnectedEstablished; sub: ConnectedEstablished, 1 active, counters: 127.0.0.1:16393: int ops=117, qu=0, qs=51, qc=0, wr=0, socks=1; sub ops=7, qu=0, qs=0, qc=0, wr=0, subs=1, socks=1, profile: 127.0.0.1:16393: Circular op-count snapshot; int: 0+117=117 (11.70 ops/s; spans 10s); sub: 0+7=7 (0.70 ops/s; spans 10s)
        17:05:39.0469: Sync timeouts: 2; async timeouts: 51; fire and forget: 3; last heartbeat: 12s ago
        """;

    [Fact]
    public void The_2x_layout_gives_the_timeout_totals_and_heartbeat_age()
    {
        var figures = StatusTextReader.Read(Layout2x);

        Assert.Equal((1L, 50L, 0L, 0.0), (figures.SyncTimeouts, figures.AsyncTimeouts, figures.FireAndForgetTimeouts, figures.HeartbeatAgeSeconds));
    }

    [Fact]
    public void The_3x_layout_gives_the_timeout_totals_and_heartbeat_age()
    {
        var figures = StatusTextReader.Read(Layout3x);

        Assert.Equal((2L, 51L, 3L, 12.0), (figures.SyncTimeouts, figures.AsyncTimeouts, figures.FireAndForgetTimeouts, figures.HeartbeatAgeSeconds));
    }

    [Theory]
    [InlineData("Sync timeouts: 0; fire and forget: 0; last heartbeat: -1s ago", 0L, null, null)] // older clients; a heartbeat that never ran
    [InlineData("", null, null, null)]
    [InlineData("Endpoint Summary: nothing else", null, null, null)]
    [InlineData("Sync timeouts: 99999999999999999999999; async timeouts: x; last heartbeat: 3s ago", null, null, 3.0)]
    public void Missing_or_odd_figures_are_left_out_never_guessed(string text, long? sync, long? async, double? heartbeat)
    {
        var figures = StatusTextReader.Read(text);

        Assert.Equal((sync, async, heartbeat), (figures.SyncTimeouts, figures.AsyncTimeouts, figures.HeartbeatAgeSeconds));
    }

    [Fact]
    [Trait("Category", "LiveProbe")]
    public async Task The_real_clients_status_text_is_read()
    {
        await using var redis = await RedisServer.StartAsync();
        using var multiplexer = await ConnectionMultiplexer.ConnectAsync(redis.EndPoint);
        await multiplexer.GetDatabase().PingAsync();

        var figures = StatusTextReader.Read(multiplexer.GetStatus());

        Assert.Equal(0, figures.SyncTimeouts);
        Assert.Equal(0, figures.AsyncTimeouts);
        Assert.Equal(0, figures.FireAndForgetTimeouts);
        Assert.NotNull(figures.HeartbeatAgeSeconds);

        // The probe's form: the text written into a reused buffer reads the same.
        using var buffer = new StringWriter(System.Globalization.CultureInfo.InvariantCulture);
        buffer.Write("left from the cycle before");
        buffer.GetStringBuilder().Clear();
        multiplexer.GetStatus(buffer);
        Assert.Equal(figures with { HeartbeatAgeSeconds = null }, StatusTextReader.Read(buffer.GetStringBuilder()) with { HeartbeatAgeSeconds = null });
    }

    [Fact]
    public void The_totals_line_is_read_from_a_buffer_as_from_a_string()
    {
        foreach (var text in (string[])[Layout2x, Layout3x, Layout3x + "\r\n\r\n", "Sync timeouts: 7; async timeouts: 8; fire and forget: 9; last heartbeat: 1s ago"])
        {
            Assert.Equal(StatusTextReader.Read(text), StatusTextReader.Read(new System.Text.StringBuilder(text)));
        }

        Assert.Equal(default, StatusTextReader.Read(new System.Text.StringBuilder()));
    }
}
