using MuxWatch.StackExchangeRedis;
using MuxWatch.Testing;
using StackExchange.Redis;

namespace MuxWatch.Tests.Live;

/// <summary>
/// The fresh connection that finds why a connection MuxWatch made stays down (<see cref="OwnedConnection.DiagnoseAsync"/>),
/// against a real server, on both client generations: it names every refusal, in a warm process where the
/// client's connect log and its event miss many, and leaves no connection behind.
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
}
