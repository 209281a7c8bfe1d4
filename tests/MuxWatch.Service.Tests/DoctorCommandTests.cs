using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Text.Json;
using MuxWatch.Testing;

namespace MuxWatch.Service.Tests;

/// <summary>
/// <c>muxwatch doctor</c>, run as the real service binary against a real redis-server set up with each finding, one
/// whose ACL refuses some of what the doctor reads, and hostile servers that answer garbage or nothing.
/// </summary>
[Trait("Category", "ServiceProcess")] // run once more on the container's native build by test.sh
public sealed class DoctorCommandTests : IAsyncLifetime
{
    private RedisServer _redis = null!;

    public async Task InitializeAsync() => _redis = await RedisServer.StartAsync();

    public async Task DisposeAsync() => await _redis.DisposeAsync();

    private static Task<(int ExitCode, string Output, string Error)> DoctorAsync(IDictionary<string, string>? environment, params string[] arguments)
    {
        var start = BuiltProgram.StartInfo("MuxWatch.Service", ["doctor", .. arguments]);
        foreach (var (name, value) in environment ?? new Dictionary<string, string>())
        {
            start.Environment[name] = value;
        }

        return BuiltProgram.RunAsync(start);
    }

    private static List<JsonElement> Findings(string json, string topic)
    {
        using var report = JsonDocument.Parse(json);
        return [.. report.RootElement.GetProperty("findings").EnumerateArray().Where(f => f.GetProperty("topic").GetString() == topic).Select(f => f.Clone())];
    }

    [Fact]
    public async Task Each_thing_that_stalls_clients_is_found_with_its_advice()
    {
        // A server set up as the person paged finds it: every write fsynced, a dataset saved once (its fork known), the
        // latency monitor off, a KEYS from a named job, and a named client that asked for a 50 MB value and reads nothing.
        await _redis.CommandAsync("CONFIG", "SET", "appendonly", "yes");
        await _redis.CommandAsync("CONFIG", "SET", "appendfsync", "always");
        await _redis.CommandAsync("CONFIG", "SET", "latency-monitor-threshold", "0");
        await _redis.CommandAsync("DEBUG", "POPULATE", "20000");
        await _redis.CommandAsync("BGSAVE");
        await Eventually.UntilAsync(async () => (await _redis.CommandAsync("INFO", "persistence")).Contains("rdb_bgsave_in_progress:0", StringComparison.Ordinal)
            && !(await _redis.CommandAsync("INFO", "persistence")).Contains("aof_rewrite_in_progress:1", StringComparison.Ordinal), "the save done");
        // A named job's command that blocks the server 200 ms (a sleep: as slow on any machine, and light beside the
        // cluster tests that run meanwhile).
        await _redis.CommandAsClientAsync("nightly-export", "DEBUG", "SLEEP", "0.2");
        using var reader = await UnreadReplyAsync();

        var (exitCode, output, error) = await DoctorAsync(null, _redis.EndPoint, "--json");

        Assert.True(exitCode == 0, error + output);
        var persistence = Assert.Single(Findings(output, "persistence"), f => f.GetProperty("warning").GetBoolean());
        Assert.Contains("appendfsync always", persistence.GetProperty("text").GetString(), StringComparison.Ordinal);
        Assert.Contains("appendfsync everysec", persistence.GetProperty("advice").GetString(), StringComparison.Ordinal);
        var sleep = Assert.Single(Findings(output, "slow-log"), f => f.GetProperty("text").GetString()!.StartsWith("DEBUG SLEEP from 127.0.0.1:", StringComparison.Ordinal));
        Assert.Contains("(nightly-export): 1 time, slowest", sleep.GetProperty("text").GetString(), StringComparison.Ordinal);
        Assert.True(sleep.GetProperty("warning").GetBoolean(), sleep.ToString());
        Assert.Contains("the server answered no one meanwhile", sleep.GetProperty("advice").GetString(), StringComparison.Ordinal);
        var huge = Assert.Single(Findings(output, "clients"));
        Assert.True(huge.GetProperty("warning").GetBoolean(), huge.ToString());
        Assert.Matches(@"^127\.0\.0\.1:\d+ \(reporting\) has \d+\.\d MB of replies waiting to be read \(its last command get\)$", huge.GetProperty("text").GetString());
        Assert.Contains("latency-monitor-threshold 0", Assert.Single(Findings(output, "latency-monitor")).GetProperty("text").GetString(), StringComparison.Ordinal);
        Assert.Matches(@"^the latest fork blocked the server \d+\.\d ms \(\d+\.\d ms per GB resident\); at \d+\.\d MB the next one will block it about \d+ ms$",
            Assert.Single(Findings(output, "fork")).GetProperty("text").GetString());
        Assert.Equal("primary, no replicas", Assert.Single(Findings(output, "role")).GetProperty("text").GetString());
        using (var report = JsonDocument.Parse(output))
        {
            Assert.Equal(0, report.RootElement.GetProperty("unread").GetArrayLength());
        }

        // The same as text: warnings first, each with its advice under it.
        var (textExit, text, _) = await DoctorAsync(null, _redis.EndPoint);
        Assert.Equal(0, textExit);
        Assert.Matches(@"^muxwatch doctor: 127\.0\.0\.1:\d+: \d+ warnings, \d+ more findings\n", text);
        Assert.Matches(@"\nwarning persistence     appendfsync always: every write waits for the disk to confirm it\n +→ a slow or busy disk", text);
    }

    [Fact]
    public async Task Replication_latency_events_and_memory_near_its_limit_are_found()
    {
        // A replica of this server, a spike the latency monitor timed, and maxmemory just above what the data holds.
        await using var replica = await RedisServer.StartAsync();
        await replica.CommandAsync("REPLICAOF", "127.0.0.1", _redis.Port.ToString(System.Globalization.CultureInfo.InvariantCulture));
        await Eventually.UntilAsync(async () => (await replica.CommandAsync("INFO", "replication")).Contains("master_link_status:up", StringComparison.Ordinal), "the replica's link up");
        await _redis.CommandAsync("CONFIG", "SET", "latency-monitor-threshold", "100");
        await _redis.CommandAsync("DEBUG", "SLEEP", "0.25");
        await _redis.CommandAsync("DEBUG", "POPULATE", "20000");
        var used = long.Parse(System.Text.RegularExpressions.Regex.Match(await _redis.CommandAsync("INFO", "memory"), @"used_memory:(\d+)").Groups[1].Value, System.Globalization.CultureInfo.InvariantCulture);
        await _redis.CommandAsync("CONFIG", "SET", "maxmemory", (used * 21 / 20).ToString(System.Globalization.CultureInfo.InvariantCulture));

        var (exitCode, output, error) = await DoctorAsync(null, _redis.EndPoint, "--json");
        var (replicaExit, replicaOutput, _) = await DoctorAsync(null, replica.EndPoint, "--json");

        Assert.True(exitCode == 0, error + output);
        var role = Assert.Single(Findings(output, "role"));
        Assert.Matches(@"^primary with 1 replica \(127\.0\.0\.1:\d+ online, lag \d+ s\)$", role.GetProperty("text").GetString());
        var latency = Assert.Single(Findings(output, "latency"), f => f.GetProperty("text").GetString()!.StartsWith("latency event command:", StringComparison.Ordinal));
        Assert.True(latency.GetProperty("warning").GetBoolean(), latency.ToString());
        Assert.Contains("LATENCY DOCTOR", latency.GetProperty("advice").GetString(), StringComparison.Ordinal);
        var memory = Assert.Single(Findings(output, "memory"));
        Assert.True(memory.GetProperty("warning").GetBoolean(), memory.ToString());
        Assert.Matches(@", \d+ keys evicted: \d+% of maxmemory$", memory.GetProperty("text").GetString());
        Assert.Equal(0, replicaExit);
        Assert.Matches($@"^replica of 127\.0\.0\.1:{_redis.Port}, link up, last heard \d+ s ago$", Assert.Single(Findings(replicaOutput, "role")).GetProperty("text").GetString());
    }

    /// <summary>A client named <c>reporting</c> that asks for a 50 MB value and never reads the reply: the server holds it in the client's output buffer.</summary>
    private async Task<TcpClient> UnreadReplyAsync()
    {
        await _redis.CommandAsync("SET", "report:big", new string('x', 1000));
        await _redis.CommandAsync("SETRANGE", "report:big", "50000000", "x");
        var client = new TcpClient();
        await client.ConnectAsync(IPAddress.Loopback, _redis.Port);
        client.ReceiveBufferSize = 4096;
        var stream = client.GetStream();
        await stream.WriteAsync(Encoding.ASCII.GetBytes("*3\r\n$6\r\nCLIENT\r\n$7\r\nSETNAME\r\n$9\r\nreporting\r\n*2\r\n$3\r\nget\r\n$10\r\nreport:big\r\n"));
        await Eventually.UntilAsync(async () => System.Text.RegularExpressions.Regex.IsMatch(await _redis.CommandAsync("CLIENT", "LIST"), @"name=reporting .*omem=\d{7,}"),
            "the 50 MB reply waiting in the client's output buffer");
        return client;
    }

    [Fact]
    public async Task A_user_whose_acl_refuses_config_and_client_list_gets_what_could_be_read_and_what_could_not()
    {
        const string password = "doctor-s3cret-pw";
        await _redis.CommandAsync("ACL", "SETUSER", "limited", "on", $">{password}", "~*", "&*", "+@all", "-config", "-client|list");
        var environment = new Dictionary<string, string> { ["MUXWATCH_PASSWORD"] = password };

        var (exitCode, output, error) = await DoctorAsync(environment, $"{_redis.EndPoint},user=limited");

        Assert.True(exitCode == 0, error + output);
        Assert.Contains("ok      role            primary, no replicas", output, StringComparison.Ordinal);
        Assert.Matches(@"\ncould not read:\n  CONFIG GET save: refused \(NOPERM[^\n]*\n  CLIENT LIST: refused \(NOPERM", output);
        Assert.Contains("slow-log", output, StringComparison.Ordinal); // the rest was read
        Assert.DoesNotContain(password, output + error, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_server_that_answers_garbage_is_read_as_far_as_it_makes_sense_and_said()
    {
        await using var hostile = HostileRedis.Start(command => command switch
        {
            ["INFO", ..] => HostileRedis.Bulk("\u0001\u0002garbage:" + new string('z', 2_000_000)),
            ["CONFIG", "GET", var setting] when setting != "databases" => ":42\r\n"u8.ToArray(),
            ["SLOWLOG", ..] => ":7\r\n"u8.ToArray(),
            ["LATENCY", ..] => HostileRedis.Bulk("not a list"),
            ["CLIENT", "LIST"] => "*1\r\n:1\r\n"u8.ToArray(),
            _ => null,
        });

        var (exitCode, output, error) = await DoctorAsync(null, hostile.EndPoint, "--json", "--timeout", "5");

        Assert.True(exitCode == 0, error + output);
        using var report = JsonDocument.Parse(output);
        var unread = report.RootElement.GetProperty("unread").EnumerateArray().Select(u => u.GetString()!).ToList();
        // Each part read or said with why: an INFO over its bound, a CONFIG reply of the wrong type (the client drops the
        // connection on it: a protocol failure), a slow log that is no list; the doctor goes on after each.
        Assert.Contains(unread, u => u.StartsWith("INFO: the reply was 2,000,010 long, over the 65,536 read", StringComparison.Ordinal));
        Assert.Contains(unread, u => u.StartsWith("CONFIG GET save: ", StringComparison.Ordinal));
        Assert.Contains(unread, u => u.StartsWith("SLOWLOG GET: the slow log's reply was not a list of entries", StringComparison.Ordinal));
        Assert.Contains(unread, u => u.StartsWith("LATENCY LATEST: ", StringComparison.Ordinal));
        Assert.All(unread, u => Assert.True(u.Length < 400, u)); // bounded, whatever the server sent
    }

    [Fact]
    public async Task A_server_that_never_answers_is_given_up_on_within_the_timeout()
    {
        // Accepts connections, answers nothing: no handshake completes.
        using var silent = new TcpListener(IPAddress.Loopback, 0);
        silent.Start();
        var endpoint = $"127.0.0.1:{((IPEndPoint)silent.LocalEndpoint).Port}";

        var (exitCode, output, error) = await DoctorAsync(null, endpoint, "--timeout", "2");

        Assert.True(exitCode == 1, error + output);
        Assert.StartsWith($"muxwatch doctor: {endpoint}: could not connect\ncould not read:\n  connect: ", output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_connection_string_that_cannot_be_used_is_bad_usage_and_never_shows_the_password()
    {
        var (exitCode, _, error) = await DoctorAsync(null, "password=hunter2-secret,abortConnect=maybe");

        Assert.Equal(2, exitCode);
        Assert.StartsWith("doctor: the connection string cannot be used: ", error, StringComparison.Ordinal);
        Assert.DoesNotContain("hunter2-secret", error, StringComparison.Ordinal);
    }
}
