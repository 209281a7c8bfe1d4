using System.Text.Json;
using Microsoft.AspNetCore.DataProtection;
using Microsoft.AspNetCore.DataProtection.KeyManagement;
using Microsoft.AspNetCore.OutputCaching;
using Microsoft.AspNetCore.SignalR;
using Microsoft.Extensions.Caching.Distributed;
using Microsoft.Extensions.Caching.Hybrid;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using MuxWatch.Sample.Libraries;
using MuxWatch.Testing;
using MuxWatch.Testing.Apps;
using StackExchange.Redis;

namespace MuxWatch.Libraries.Tests;

/// <summary>
/// An app whose Redis comes from libraries (the sample's wiring: the distributed cache and HybridCache over it,
/// output caching, the SignalR backplane, Data Protection), with <c>AddMuxWatch()</c> as its only MuxWatch call,
/// against a real redis-server: each library's multiplexer is watched, a real stall while it is used gives
/// timeouts attributed to it with the server's cause, and a disposed one is let go. Run by test.sh on the newest
/// client and on 2.7.27, the oldest these libraries take.
/// </summary>
[Trait("Category", "LiveProbe")]
public sealed class LibraryDiscoveryLiveTests : IAsyncLifetime
{
    private RedisServer _redis = null!;

    public LibraryDiscoveryLiveTests() => TestThreadPool.EnsureRoomy();

    public async Task InitializeAsync() => _redis = await RedisServer.StartAsync();

    public async Task DisposeAsync() => await _redis.DisposeAsync();

    /// <summary>The libraries' connection string: the server's default slow log, and timeouts short enough for a stall to trip.</summary>
    private string Redis => $"{_redis.EndPoint},syncTimeout=500,asyncTimeout=500";

    [Fact]
    public async Task Every_librarys_multiplexer_is_watched_with_AddMuxWatch_alone_and_named_after_the_library()
    {
        await using var app = await LibraryApp.StartAsync(services => services.AddRedisLibraries(Redis));
        await UseEveryLibraryAsync(app.Services);

        IReadOnlyList<JsonElement> targets = [];
        await Eventually.UntilAsync(async () =>
        {
            targets = await app.TargetsOnAsync(_redis.EndPoint);
            return targets.Count == 4 && targets.All(t => t.GetProperty("state").GetString() == "connected");
        }, "the four multiplexers on the server watched and connected");

        // HybridCache keeps the distributed cache's multiplexer; Data Protection's is the one the app connected for it.
        var byName = targets.ToDictionary(t => Stem(t.GetProperty("name").GetString()!), t => t);
        Assert.Equal(["app", "distributed-cache", "output-cache", "signalr"], byName.Keys.Order());
        Assert.All(targets, t => Assert.True(t.GetProperty("discovered").GetBoolean()));
        Assert.All(targets, t => Assert.False(t.GetProperty("owned").GetBoolean()));
        Assert.Equal("Microsoft.Extensions.Caching.StackExchangeRedis", byName["distributed-cache"].GetProperty("madeBy").GetString());
        Assert.Equal("Microsoft.AspNetCore.OutputCaching.StackExchangeRedis", byName["output-cache"].GetProperty("madeBy").GetString());
        Assert.Equal("Microsoft.AspNetCore.SignalR.StackExchangeRedis", byName["signalr"].GetProperty("madeBy").GetString());
        Assert.Equal("MuxWatch.Sample.Libraries.RedisLibraries.AddRedisLibraries", byName["app"].GetProperty("madeBy").GetString()); // the factory the app registered

        // Probed like a multiplexer given to AddMultiplexer: its series under its name, its server polled.
        await Eventually.UntilAsync(async () =>
        {
            var metrics = await app.ScrapeAsync();
            targets = await app.TargetsOnAsync(_redis.EndPoint);
            return targets.All(t => metrics.Value("muxwatch_connected", ("multiplexer", t.GetProperty("name").GetString()!), ("endpoint", _redis.EndPoint)) == 1
                && metrics.Value("muxwatch_ping_seconds_count", ("multiplexer", t.GetProperty("name").GetString()!), ("endpoint", _redis.EndPoint)) >= 1
                && t.GetProperty("servers")[0].GetProperty("polling") is { ValueKind: JsonValueKind.Object } polling
                && polling.GetProperty("lastPollSuccess").ValueKind == JsonValueKind.String);
        }, "each discovered multiplexer's gauges and PINGs in /metrics, and its server polled");
    }

    public static TheoryData<string> StalledLibraries() => ["distributed-cache", "output-cache", "signalr", "data-protection"];

    [Theory]
    [MemberData(nameof(StalledLibraries))]
    public async Task A_stall_while_a_library_waits_gives_timeouts_attributed_to_its_multiplexer_with_the_servers_cause(string library)
    {
        // MuxWatch's own PINGs off: one caught by the stall would time out first, a 3.x client then drops the connection
        // and the library's requests fail as ConnectionDisposed instead of timing out (the order is left to no chance).
        await using var app = await LibraryApp.StartAsync(
            services => services.AddRedisLibraries(Redis), // the app's own multiplexer (Data Protection's) among them, on the same server
            builder => builder.Configuration["MuxWatch:Ping"] = "false");
        await UseEveryLibraryAsync(app.Services);
        await app.UntilPolledAsync(_redis.EndPoint, targets: 4);
        var expected = Stem(library == "data-protection" ? "app" : library);
        var name = (await app.TargetsOnAsync(_redis.EndPoint)).Select(t => t.GetProperty("name").GetString()!).Single(n => Stem(n) == expected);

        var use = Use(app.Services, library);
        var sleeping = _redis.CommandInBackground("DEBUG", "SLEEP", "3");
        await Eventually.UntilAsync(async () => !await _redis.AnswersPingAsync(), "the server to be asleep");
        var outcomes = await Task.WhenAll(Enumerable.Range(0, 8).Select(i => Task.Run(async () =>
        {
            try
            {
                await use(i);
                return false;
            }
            catch (Exception ex) when (IsRedisTimeout(ex))
            {
                return true;
            }
        })));
        await sleeping;
        var timedOut = outcomes.Count(t => t);
        Assert.True(timedOut > 0, $"{library}: no call timed out during the stall");

        // Another multiplexer of the app on the server (Data Protection's, 'app') may have had a call of its own in
        // flight during the stall: its timeout is its own, attributed to it, and counted apart from the library's.
        IReadOnlyList<JsonElement> caught = [];
        IReadOnlyList<JsonElement> libraryTimeouts = [];
        await Eventually.UntilAsync(async () =>
        {
            caught = [.. (await app.TimeoutsOnAsync(_redis.EndPoint)).Where(t => t.GetProperty("source").GetString() == "first-chance")];
            libraryTimeouts = [.. caught.Where(t => t.GetProperty("multiplexer").GetString() == name)];
            return libraryTimeouts.Count >= timedOut && caught.All(t => t.GetProperty("settled").GetBoolean());
        }, $"the {timedOut} timeouts of the {library} recorded and settled");

        Assert.Equal(timedOut, libraryTimeouts.Count);
        var watched = (await app.TargetsOnAsync(_redis.EndPoint)).Select(t => t.GetProperty("name").GetString()).ToHashSet();
        Assert.All(caught, t => Assert.Contains(t.GetProperty("multiplexer").GetString(), watched)); // each attributed to its own
        Assert.All(caught, t => Assert.Equal("slow-command", t.GetProperty("cause").GetString()));
    }

    [Fact]
    public async Task The_libraries_multiplexers_disposed_with_their_container_are_let_go_and_the_next_ones_are_watched()
    {
        await using var app = await LibraryApp.StartAsync(_ => { });

        for (var round = 1; round <= 2; round++)
        {
            // A second container with the same libraries, as a test host or a worker of the app has: they are made and disposed with it.
            var services = new ServiceCollection().AddLogging();
            services.AddSingleton<Microsoft.Extensions.Configuration.IConfiguration>(new Microsoft.Extensions.Configuration.ConfigurationBuilder().Build());
            services.AddRedisLibraries(Redis);
            var container = services.BuildServiceProvider();
            await UseEveryLibraryAsync(container);
            IReadOnlyList<string> names = [];
            await Eventually.UntilAsync(async () => (names = [.. (await app.TargetsOnAsync(_redis.EndPoint)).Select(t => t.GetProperty("name").GetString()!)]).Count == 4,
                $"round {round}: the four multiplexers watched");
            await Eventually.UntilAsync(async () =>
            {
                var metrics = await app.ScrapeAsync();
                return names.All(name => metrics.Value("muxwatch_connected", ("multiplexer", name), ("endpoint", _redis.EndPoint)) == 1);
            }, $"round {round}: their series exported");

            await container.DisposeAsync();
            await Eventually.UntilAsync(async () => (await app.TargetsOnAsync(_redis.EndPoint)).Count == 0, $"round {round}: the disposed multiplexers let go");
            await Eventually.UntilAsync(async () =>
            {
                var metrics = await app.ScrapeAsync();
                return names.All(name => metrics.Samples("muxwatch_connected", ("multiplexer", name)).Count == 0);
            }, $"round {round}: their series removed");
        }
    }

    [Fact]
    public async Task A_multiplexer_the_app_also_names_is_watched_once_under_the_apps_name()
    {
        await using var app = await LibraryApp.StartAsync(services =>
        {
            services.AddSingleton<IConnectionMultiplexer>(_ => ConnectionMultiplexer.Connect(Redis));
            services.AddMuxWatch().AddMultiplexer("orders", sp => sp.GetRequiredService<IConnectionMultiplexer>());
        });

        await Eventually.UntilAsync(async () => (await app.TargetsOnAsync(_redis.EndPoint)) is [var only] && only.GetProperty("state").GetString() == "connected",
            "the named multiplexer watched");
        var multiplexer = app.Services.GetRequiredService<IConnectionMultiplexer>();
        await multiplexer.GetDatabase().StringSetAsync("k", "v");

        // Several probe cycles later still once, under its name, not discovered.
        var metrics = await app.ScrapeAsync();
        await Eventually.UntilAsync(async () => (metrics = await app.ScrapeAsync()).Value("muxwatch_ping_seconds_count", ("multiplexer", "orders"), ("endpoint", _redis.EndPoint)) >= 2,
            "two PINGs");
        var targets = await app.TargetsOnAsync(_redis.EndPoint);
        var target = Assert.Single(targets);
        Assert.Equal("orders", target.GetProperty("name").GetString());
        Assert.False(target.GetProperty("discovered").GetBoolean());
        Assert.Equal(["orders"], metrics.Samples("muxwatch_connected", ("endpoint", _redis.EndPoint)).Select(s => s.Labels["multiplexer"]));
    }

    [Fact]
    public async Task With_discovery_off_only_what_the_app_names_is_watched()
    {
        await using var app = await LibraryApp.StartAsync(
            services => services.AddRedisLibraries(Redis),
            builder => builder.Configuration["MuxWatch:DiscoverMultiplexers"] = "false");
        await UseEveryLibraryAsync(app.Services);

        var metrics = await app.ScrapeAsync();
        await Eventually.UntilAsync(async () => (metrics = await app.ScrapeAsync()).Value("muxwatch_probe_cycle_seconds_count") >= 5, "five probe cycles");
        Assert.Empty(await app.TargetsOnAsync(_redis.EndPoint));
        Assert.Empty(metrics.Samples("muxwatch_connected", ("endpoint", _redis.EndPoint)));
    }

    [Fact]
    public async Task An_app_that_connects_many_multiplexers_has_at_most_16_watched_and_a_bounded_set_of_names()
    {
        var logs = new CollectingLoggerProvider();
        await using var app = await LibraryApp.StartAsync(_ => { }, builder => builder.Logging.AddProvider(logs));
        var seen = new HashSet<string>(StringComparer.Ordinal);

        // Twice over: 20 connected at once (a multiplexer per request, the anti-pattern), then all disposed.
        for (var round = 0; round < 2; round++)
        {
            var many = await Task.WhenAll(Enumerable.Range(0, 20).Select(_ => ConnectionMultiplexer.ConnectAsync(_redis.EndPoint)));
            await Eventually.UntilAsync(async () => (await app.TargetsOnAsync(_redis.EndPoint)).Count == LibraryAppLimits.MaxDiscovered,
                $"round {round}: {LibraryAppLimits.MaxDiscovered} of the 20 watched");
            IReadOnlyList<(IReadOnlyDictionary<string, string> Labels, double Value)> connected = [];
            await Eventually.UntilAsync(async () => (connected = (await app.ScrapeAsync()).Samples("muxwatch_connected", ("endpoint", _redis.EndPoint))).Count == LibraryAppLimits.MaxDiscovered,
                $"round {round}: their series exported");
            seen.UnionWith(connected.Select(s => s.Labels["multiplexer"]));
            foreach (var multiplexer in many)
            {
                await multiplexer.DisposeAsync();
            }

            await Eventually.UntilAsync(async () => (await app.TargetsOnAsync(_redis.EndPoint)).Count == 0, $"round {round}: all let go");
        }

        Assert.Equal(LibraryAppLimits.MaxDiscovered, seen.Count); // the second round reused the first round's names
        Assert.Single(logs.Lines, l => l.Text.Contains("more than 16 multiplexers connected at once", StringComparison.Ordinal));
    }

    /// <summary>Uses each library once, as the app's first requests would: each connects its multiplexer lazily.</summary>
    private static async Task UseEveryLibraryAsync(IServiceProvider services)
    {
        await services.GetRequiredService<IDistributedCache>().SetStringAsync("greeting", "hello");
        await services.GetRequiredService<HybridCache>().GetOrCreateAsync("hybrid", _ => ValueTask.FromResult("made"));
        await services.GetRequiredService<IOutputCacheStore>().SetAsync("page", [1, 2, 3], ["tag"], TimeSpan.FromMinutes(1), CancellationToken.None);
        await SendNewsAsync(services.GetRequiredService<IHubContext<NewsHub>>());
        services.GetRequiredService<IDataProtectionProvider>().CreateProtector("test").Protect("secret");
    }

    /// <summary>
    /// A SignalR broadcast. Its Redis backplane starts connecting when it is made and sets its connection before its
    /// subscriber: a send in between throws a NullReferenceException inside SignalR (seen once in a full run), so the
    /// first send is tried again once the backplane had a moment; anything else fails the test.
    /// </summary>
    private static async Task SendNewsAsync(IHubContext<NewsHub> hub)
    {
        try
        {
            await hub.Clients.All.SendAsync("news", "hello");
        }
        catch (NullReferenceException)
        {
            await Eventually.UntilAsync(async () =>
            {
                try
                {
                    await hub.Clients.All.SendAsync("news", "hello");
                    return true;
                }
                catch (NullReferenceException)
                {
                    return false;
                }
            }, "SignalR's backplane to finish connecting");
        }
    }

    /// <summary>One call through <paramref name="library"/>, as the app makes it.</summary>
    private static Func<int, Task> Use(IServiceProvider services, string library) => library switch
    {
        "distributed-cache" => i => services.GetRequiredService<IDistributedCache>().GetStringAsync($"key{i}"),
        "output-cache" => i => services.GetRequiredService<IOutputCacheStore>().GetAsync($"page{i}", CancellationToken.None).AsTask(),
        "signalr" => i => services.GetRequiredService<IHubContext<NewsHub>>().Clients.All.SendAsync("news", i),
        "data-protection" => _ => Task.Run(() => services.GetRequiredService<IOptions<KeyManagementOptions>>().Value.XmlRepository!.GetAllElements()),
        _ => throw new ArgumentOutOfRangeException(nameof(library)),
    };

    private static bool IsRedisTimeout(Exception? ex)
    {
        for (; ex is not null; ex = ex.InnerException)
        {
            if (ex is RedisTimeoutException || (ex is AggregateException aggregate && aggregate.InnerExceptions.Any(IsRedisTimeout)))
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>A discovered name without the number another process-wide twin got (<c>signalr-2</c> is <c>signalr</c>).</summary>
    private static string Stem(string name) =>
        name.LastIndexOf('-') is > 0 and var dash && int.TryParse(name.AsSpan(dash + 1), out _) ? name[..dash] : name;

    /// <summary>A hub whose messages cross instances through the Redis backplane.</summary>
    private sealed class NewsHub : Hub
    {
    }
}

/// <summary>The bound MuxWatch documents for discovered multiplexers (docs/libraries.md).</summary>
internal static class LibraryAppLimits
{
    public const int MaxDiscovered = 16;
}
