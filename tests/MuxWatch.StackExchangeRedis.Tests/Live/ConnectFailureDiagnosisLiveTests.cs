using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using MuxWatch.Hosting;
using MuxWatch.Sources;
using MuxWatch.StackExchangeRedis;
using MuxWatch.Testing;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis.Tests.Live;

/// <summary>
/// The fresh connection that finds why a connection MuxWatch made stays down (<see cref="OwnedConnection.DiagnoseAsync"/>),
/// against a real server, on both client generations: it names every refusal, in a warm process where the
/// client's connect log and its event miss many, and leaves no connection behind; and an app's own
/// multiplexer, whose refusals the client reported before MuxWatch was handed it or not at all, has them
/// named from a connection made from its configuration string.
/// </summary>
[Trait("Category", "LiveProbe")]
public sealed class ConnectFailureDiagnosisLiveTests : IAsyncLifetime
{
    private const string Password = "diagnosis-pw-3141";
    private RedisServer _redis = null!;

    public async Task InitializeAsync() => _redis = await RedisServer.StartAsync("--requirepass", Password);

    public async Task DisposeAsync() => await _redis.DisposeAsync();

    [Fact]
    public async Task Every_refused_password_is_named_and_no_connection_is_left_open()
    {
        var wrong = ConfigurationOptions.Parse($"{_redis.EndPoint},password=wrong-{Password},abortConnect=false");

        // Twenty in a row in one warm process: measured, the client's connect log named 17 of 30 and its
        // event a few of the rest; the typed refusal a PING carries names all.
        var found = new List<string?>();
        for (var i = 0; i < 20; i++)
        {
            found.Add(await OwnedConnection.DiagnoseAsync(wrong, TimeSpan.FromSeconds(5)));
        }

        Assert.All(found, failureType => Assert.Equal("AuthenticationFailure", failureType));
        await Eventually.UntilAsync(async () => await _redis.CommandAsync("INFO", "clients") is var info
            && info.Contains("connected_clients:1\r", StringComparison.Ordinal), "every diagnosing connection closed (only redis-cli's own left)");
    }

    [Fact]
    public async Task The_right_password_is_no_refusal_and_a_server_that_is_down_is_none_either()
    {
        var right = ConfigurationOptions.Parse($"{_redis.EndPoint},password={Password},abortConnect=false");
        Assert.Null(await OwnedConnection.DiagnoseAsync(right, TimeSpan.FromSeconds(5)));

        var nobody = ConfigurationOptions.Parse($"127.0.0.1:{FreePort.Next()},password={Password},abortConnect=false,connectTimeout=1000");
        Assert.NotEqual("AuthenticationFailure", await OwnedConnection.DiagnoseAsync(nobody, TimeSpan.FromSeconds(1)));
    }

    [Fact]
    public async Task A_certificate_this_connection_cannot_check_is_no_refused_password()
    {
        // The client calls a refused certificate an AuthenticationFailure too. Made from a configuration
        // string, the diagnosing connection lacks an app's own validation callback (a private CA): its
        // handshake failing there says nothing of the app's password, so nothing is named.
        await using var tls = await TlsRedisServer.StartAsync("--requirepass", Password);
        var options = ConfigurationOptions.Parse($"{tls.EndPoint},ssl=true,password={Password},abortConnect=false");
        Assert.Null(await OwnedConnection.DiagnoseAsync(options, TimeSpan.FromSeconds(5)));

        var wrong = ConfigurationOptions.Parse($"{tls.EndPoint},ssl=true,password=wrong-{Password},abortConnect=false");
        Assert.Null(await OwnedConnection.DiagnoseAsync(wrong, TimeSpan.FromSeconds(5)));
    }

    [Fact]
    public async Task An_apps_own_multiplexer_refused_before_MuxWatch_had_it_is_named()
    {
        // The app connects first (its refusal reported to no handler of MuxWatch's), then hands it over.
        await using var app = await ConnectionMultiplexer.ConnectAsync($"{_redis.EndPoint},password=wrong-{Password},abortConnect=false,connectTimeout=1000");
        await using var watching = await StartWatchingAsync(("locked", app));
        var host = watching.Host;

        await Eventually.UntilAsync(() => Task.FromResult(LastError(host, "locked")?.Contains("AuthenticationFailure", StringComparison.Ordinal) == true),
            "the app's refused password named in its target's last error");
        Assert.DoesNotContain(Password, LastError(host, "locked")!, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_password_rotated_under_an_apps_own_connected_multiplexers_is_named()
    {
        // Three: the client names the refusal itself when it happens to come first in an outage.
        var apps = new List<ConnectionMultiplexer>();
        for (var i = 0; i < 3; i++)
        {
            apps.Add(await ConnectionMultiplexer.ConnectAsync($"{_redis.EndPoint},password={Password},abortConnect=false"));
        }

        try
        {
            await using var watching = await StartWatchingAsync([.. apps.Select((app, i) => ($"app-{i}", app))]);
            var host = watching.Host;
            await Eventually.UntilAsync(() => Task.FromResult(apps.All(app => app.IsConnected)), "the app's multiplexers connected");

            const string Rotated = "rotated-app-pw-2718";
            Assert.Equal("OK", await _redis.CommandAsync("CONFIG", "SET", "requirepass", Rotated));
            Assert.NotEqual("0", await _redis.CommandWithPasswordAsync(Rotated, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"));

            await Eventually.UntilAsync(
                () => Task.FromResult(Enumerable.Range(0, 3).All(i => LastError(host, $"app-{i}")?.Contains("AuthenticationFailure", StringComparison.Ordinal) == true)),
                "every app multiplexer's refused reconnects named");
        }
        finally
        {
            foreach (var app in apps)
            {
                await app.DisposeAsync();
            }
        }
    }

    private static string? LastError(IHost host, string name) =>
        host.Services.GetServices<ITargetStatusSource>().SelectMany(s => s.Targets()).Single(t => t.Name == name).LastError;

    private static async Task<Watching> StartWatchingAsync(params (string Name, ConnectionMultiplexer Multiplexer)[] multiplexers)
    {
        var builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders();
        builder.Configuration["MuxWatch:ProbeInterval"] = "00:00:00.200";
        builder.Configuration["MuxWatch:PingInterval"] = "00:00:00.200";
        var watching = builder.Services.AddMuxWatch().UseMetricsRegistry(Prometheus.Metrics.NewCustomRegistry());
        foreach (var (name, multiplexer) in multiplexers)
        {
            watching.AddMultiplexer(name, _ => multiplexer);
        }

        var host = builder.Build();
        await host.StartAsync();
        return new Watching(host);
    }

    /// <summary>The app's host, stopped (its probe loop and MuxWatch's connections ended) when disposed.</summary>
    private sealed class Watching(IHost host) : IAsyncDisposable
    {
        public IHost Host => host;

        public async ValueTask DisposeAsync()
        {
            await host.StopAsync();
            host.Dispose();
        }
    }
}
