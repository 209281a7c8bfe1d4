using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using MuxWatch.Testing;
using Prometheus;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis.Tests.Live;

/// <summary>
/// A poll keeps only the <c>INFO</c> fields MuxWatch reads (<see cref="ServerPollResult.InfoFields"/>), on a real primary with
/// its replica and on the replica: the trackers and the export, fed a real server's whole <c>INFO</c>, ask for no other field,
/// and what they record and export from the fields kept is what they did from the whole reply.
/// </summary>
[Trait("Category", "LiveProbe")]
public sealed class InfoFieldsLiveTests : IAsyncLifetime
{
    private static readonly DateTimeOffset T0 = DateTimeOffset.Parse("2026-11-30T12:00:00Z", CultureInfo.InvariantCulture);
    private RedisServer _primary = null!;
    private RedisServer _replica = null!;

    public async Task InitializeAsync()
    {
        _primary = await RedisServer.StartAsync();
        _replica = await RedisServer.StartAsync("--replicaof", "127.0.0.1", _primary.Port.ToString(CultureInfo.InvariantCulture));
    }

    public async Task DisposeAsync()
    {
        await _replica.DisposeAsync();
        await _primary.DisposeAsync();
    }

    [Fact]
    public async Task The_trackers_read_only_the_fields_a_poll_keeps_and_say_the_same_from_them_as_from_the_whole_info()
    {
        using var connection = await ConnectionMultiplexer.ConnectAsync($"{_primary.EndPoint},{_replica.EndPoint},allowAdmin=true");
        var primary = connection.GetServer(_primary.EndPoint);
        var replica = connection.GetServer(_replica.EndPoint);
        await Eventually.UntilAsync(async () => (await replica.InfoRawAsync("replication"))!.Contains("master_link_status:up", StringComparison.Ordinal),
            "the replica linked to its primary");

        foreach (var server in new[] { primary, replica })
        {
            // Two polls with a save between them, so that the save seen only by its counters is read too (after the save a
            // replica's first sync makes its primary run, which SAVE would refuse).
            await Eventually.UntilAsync(async () => (await server.InfoRawAsync("persistence"))!.Contains("rdb_bgsave_in_progress:0", StringComparison.Ordinal),
                "no background save running");
            var before = await server.InfoRawAsync();
            await server.ExecuteAsync("SAVE");
            var after = await server.InfoRawAsync();
            var endpoint = EndpointText.Of(server.EndPoint);

            var asked = new HashSet<string>(StringComparer.Ordinal);
            Track(endpoint, [Recording(before, asked), Recording(after, asked)]);
            var notKept = asked.Where(field => !ServerPollResult.InfoFields.Contains(field)).ToList();
            Assert.True(notKept.Count == 0, $"{endpoint}: the trackers read INFO fields a poll does not keep: {string.Join(", ", notKept)}");
            Assert.Contains("role", asked);
            Assert.Contains(server == primary ? "slave0" : "master_link_status", asked);

            var whole = Track(endpoint, [Parse(before, null), Parse(after, null)]);
            var kept = Track(endpoint, [Parse(before, ServerPollResult.InfoFields), Parse(after, ServerPollResult.InfoFields)]);
            Assert.Equal(whole.Metrics, kept.Metrics);
            Assert.Equal(whole.Events, kept.Events);
            Assert.Contains("bgsave", kept.Events, StringComparison.Ordinal); // the save between the polls, from the fields kept
        }
    }

    [Fact]
    public async Task A_poll_of_a_real_server_keeps_only_the_fields_read()
    {
        using var connection = await ConnectionMultiplexer.ConnectAsync($"{_primary.EndPoint},allowAdmin=true");
        var endpoint = EndpointText.Of(connection.GetServers().Single().EndPoint);
        var reader = new EndpointPollReader(new ServerTimeline(endpoint, TimeSpan.FromHours(1)), new ServerPollRequests(new ServerTimelines(Microsoft.Extensions.Options.Options.Create(new MuxWatchOptions()))), TimeProvider.System);

        var poll = await reader.ReadAsync(connection, connection.GetServers().Single().EndPoint, TimeSpan.FromSeconds(10), keySizes: false, clientTimeout: null, CancellationToken.None);

        Assert.Null(poll.Error);
        var fields = poll.Info!.Keys.ToList();
        Assert.All(fields, field => Assert.True(ServerPollResult.InfoFields.Contains(field), $"{field} kept but read by nobody"));
        Assert.Equal("master", poll.Info["role"]);
        Assert.Equal("1", poll.Info["connected_slaves"]);
        Assert.Contains("slave0", fields);
        Assert.DoesNotContain("redis_version", fields); // read by nobody: not kept
    }

    /// <summary>Applies <paramref name="infos"/> as successive polls to a fresh tracker: the export and the timeline's events, as text.</summary>
    private static (string Metrics, string Events) Track(string endpoint, IReadOnlyDictionary<string, string>[] infos)
    {
        var registry = Metrics.NewCustomRegistry();
        var timeline = new ServerTimeline(endpoint, TimeSpan.FromHours(1));
        var tracker = new ServerStateTracker(timeline, new MuxWatchMetrics(registry));
        for (var i = 0; i < infos.Length; i++)
        {
            Assert.True(tracker.Apply(new ServerPollResult(endpoint, T0.AddSeconds(10 * i), T0.AddSeconds((10 * i) + 0.01)) { Info = infos[i], Slowlog = [] }));
        }

        using var stream = new MemoryStream();
        registry.CollectAndExportAsTextAsync(stream).GetAwaiter().GetResult();
        var events = string.Join("; ", timeline.Log.Events().Select(e => $"{KebabCaseNames<ServerEventKind>.Of(e.Kind, "?")} {e.Start:O} {e.End:O} {e.Outcome}"));
        return (System.Text.Encoding.UTF8.GetString(stream.ToArray()), events);
    }

    private static Dictionary<string, string> Parse(string? text, System.Collections.Frozen.FrozenSet<string>? only) =>
        ReplyLimits.ParseInfo(text!, new Dictionary<string, string>(StringComparer.Ordinal), only);

    private static RecordingFields Recording(string? text, HashSet<string> asked) => new(Parse(text, null), asked);

    /// <summary>A whole INFO that notes every field asked of it; reading all of it (an enumeration) is noted as <c>*</c>.</summary>
    private sealed class RecordingFields(Dictionary<string, string> fields, HashSet<string> asked) : IReadOnlyDictionary<string, string>
    {
        public string this[string key] => Note(key, fields[key]);

        public IEnumerable<string> Keys => Note("*", fields.Keys);

        public IEnumerable<string> Values => Note("*", fields.Values);

        public int Count => fields.Count;

        public bool ContainsKey(string key) => Note(key, fields.ContainsKey(key));

        public bool TryGetValue(string key, [MaybeNullWhen(false)] out string value) => Note(key, fields.TryGetValue(key, out value));

        public IEnumerator<KeyValuePair<string, string>> GetEnumerator() => Note("*", fields.GetEnumerator());

        System.Collections.IEnumerator System.Collections.IEnumerable.GetEnumerator() => GetEnumerator();

        private T Note<T>(string key, T result)
        {
            asked.Add(key);
            return result;
        }
    }
}
