using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Text.Json;
using MuxWatch.Testing;

namespace MuxWatch.Tool.Tests;

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
        var start = BuiltProgram.StartInfo("MuxWatch.Tool", ["doctor", .. arguments]);
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

    [Fact]
    public async Task A_password_with_a_comma_reaches_only_the_server_named_and_is_never_printed()
    {
        // The password is given to the client as it is: with ",127.0.0.1:port" in it, it was appended to the connection
        // string, and that second server received AUTH; with ",connectTimeout=Z..." its tail was printed in an error.
        await using var other = HostileRedis.Start(_ => null);
        var (exitCode, output, error) = await DoctorAsync(new Dictionary<string, string> { ["MUXWATCH_PASSWORD"] = $"first,{other.EndPoint}" }, _redis.EndPoint, "--timeout", "5");
        var (_, output2, error2) = await DoctorAsync(new Dictionary<string, string> { ["MUXWATCH_PASSWORD"] = "pw,connectTimeout=Zsecret9" }, _redis.EndPoint, "--timeout", "5");

        Assert.True(exitCode == 0, error + output); // a server without a password takes AUTH's refusal as no password needed (the client's own rule)
        Assert.Equal(0, other.Commands);
        Assert.DoesNotContain("Zsecret9", output2 + error2, StringComparison.Ordinal);
        Assert.DoesNotContain(other.EndPoint, output + error, StringComparison.Ordinal);

        // One written into the connection string itself is refused, naming neither the password nor the tail.
        var (refusedExit, _, refused) = await DoctorAsync(null, $"{_redis.EndPoint},password=first,{other.EndPoint}");
        Assert.Equal(2, refusedExit);
        Assert.StartsWith("doctor: the connection string cannot be used: it has a part without '=' after password=", refused, StringComparison.Ordinal);
        Assert.DoesNotContain("first", refused, StringComparison.Ordinal);
        Assert.Equal(0, other.Commands);
    }

    [Fact]
    public async Task A_password_or_ca_file_that_is_no_such_file_is_bad_usage_naming_the_option()
    {
        var notACertificate = Path.GetTempFileName();
        try
        {
            await File.WriteAllTextAsync(notACertificate, "this is no certificate\n");

            var (zeroExit, _, zeroError) = await DoctorAsync(null, _redis.EndPoint, "--password-file", "/dev/zero");
            var (caExit, _, caError) = await DoctorAsync(null, _redis.EndPoint, "--trusted-ca-file", notACertificate);

            Assert.True(zeroExit == 2, zeroError);
            Assert.StartsWith("doctor: --password-file cannot be used (IOException: it holds more than 4096 bytes", zeroError, StringComparison.Ordinal);
            Assert.True(caExit == 2, caError);
            Assert.StartsWith("doctor: --trusted-ca-file is not a readable certificate, PEM or DER (", caError, StringComparison.Ordinal);
        }
        finally
        {
            File.Delete(notACertificate);
        }
    }

    [Fact]
    public async Task What_a_server_sends_is_believed_within_bounds_and_never_reaches_the_terminal_raw()
    {
        // A replica line with a key twice, figures no server has, and a primary's host with a carriage return and an
        // escape sequence that would print a fake "ok" over the warning.
        const string info = "# Server\r\nredis_version:7.0.15\r\n# Replication\r\nrole:slave\r\nmaster_host:10.0.0.1\r\u001b[2K\rok      role            all fine\r\n"
            + "master_port:6379\r\nmaster_link_status:down\r\nslave0:ip=a,ip=b,port=1,state=online,lag=0\r\n# Memory\r\nused_memory:-5\r\nused_memory_rss:-5\r\nmaxmemory:100\r\n"
            + "# Stats\r\nevicted_keys:0\r\nlatest_fork_usec:9223372036854775807\r\n";
        await using var hostile = HostileRedis.Start(command => command switch
        {
            ["INFO", ..] => HostileRedis.Bulk(info),
            _ => null,
        });

        var (exitCode, output, error) = await DoctorAsync(null, hostile.EndPoint, "--timeout", "5");

        Assert.True(exitCode == 0, error + output);
        Assert.DoesNotContain('\u001b', output);
        Assert.DoesNotContain('\r', output);
        Assert.Matches(@"\nwarning role            replica of 10\.0\.0\.1\?\?\[2K\?ok      role            all fine:6379, its link to it down\n", output);
        Assert.Contains("  INFO used_memory: \"-5\" cannot be believed; left out", output, StringComparison.Ordinal);
        Assert.Contains("  INFO latest_fork_usec: \"9223372036854775807\" cannot be believed; left out", output, StringComparison.Ordinal);
        Assert.DoesNotContain("% of maxmemory", output, StringComparison.Ordinal);
        Assert.DoesNotContain("the latest fork blocked", output, StringComparison.Ordinal);
        Assert.DoesNotContain("bytes resident", output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_primary_whose_replica_line_repeats_a_key_is_read()
    {
        const string info = "# Replication\r\nrole:master\r\nconnected_slaves:1\r\nslave0:ip=10.0.0.2,ip=10.0.0.3,port=6379,state=online,lag=0\r\n";
        await using var hostile = HostileRedis.Start(command => command is ["INFO", ..] ? HostileRedis.Bulk(info) : null);

        var (exitCode, output, error) = await DoctorAsync(null, hostile.EndPoint, "--timeout", "5");

        Assert.True(exitCode == 0, error + output); // was exit 2: "An item with the same key has already been added"
        Assert.Contains("ok      role            primary with 1 replica (10.0.0.2:6379 online, lag 0 s)", output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_client_list_near_its_limit_is_read_within_the_heap()
    {
        // 16 MB of clients (just under the 16 MiB read), one with a large reply waiting: the service's heap is bounded
        // (256 MiB), and splitting the list into strings ran it out (OutOfMemoryException, exit 1, no output).
        var line = "id=1 addr=10.0.0.9:40000 laddr=127.0.0.1:6379 fd=8 name= age=1 idle=1 flags=N db=0 sub=0 psub=0 multi=-1 qbuf=0 qbuf-free=0 obl=0 oll=0 omem=0 events=r cmd=get user=default\n";
        var list = new System.Text.StringBuilder(16_700_000);
        list.Append("id=2 addr=10.0.0.7:41000 name=reporting omem=52428800 cmd=get\n");
        while (list.Length + line.Length < 16_700_000)
        {
            list.Append(line);
        }

        var reply = HostileRedis.Bulk(list.ToString());
        await using var hostile = HostileRedis.Start(command => command is ["CLIENT", "LIST"] ? reply : null);

        var (exitCode, output, error) = await DoctorAsync(null, hostile.EndPoint, "--timeout", "20");

        Assert.True(exitCode == 0, error + output);
        Assert.Contains("warning clients         10.0.0.7:41000 (reporting) has 52.4 MB of replies waiting to be read (its last command get)", output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task The_timeout_covers_the_connection_too()
    {
        // Accepts and never answers: the client's connect timeout was the whole budget, and a second connect (to say
        // why) took it again: 20.9 s for --timeout 10. Judged against the budget with a margin for the process's start.
        using var silent = new TcpListener(IPAddress.Loopback, 0);
        silent.Start();
        var endpoint = $"127.0.0.1:{((IPEndPoint)silent.LocalEndpoint).Port}";

        var started = System.Diagnostics.Stopwatch.StartNew();
        var (exitCode, output, error) = await DoctorAsync(null, endpoint, "--timeout", "6");

        Assert.True(exitCode == 1, error + output);
        Assert.True(started.Elapsed < TimeSpan.FromSeconds(6 + 4), $"{started.Elapsed.TotalSeconds:F1} s for --timeout 6");
    }

    [Fact]
    public async Task A_reply_nested_deeper_than_any_real_one_drops_the_connection_not_the_process()
    {
        // SLOWLOG GET answered with an array 200,000 levels deep: the client reads replies by recursion, and one this deep
        // overflowed the stack and ended the process (measured on 3.4.35 from about 13,000 levels). The guard under the
        // doctor's connection drops it first; what comes after is read on a new connection.
        var nested = System.Text.Encoding.ASCII.GetBytes(string.Concat(Enumerable.Repeat("*1\r\n", 200_000)) + ":1\r\n");
        await using var hostile = HostileRedis.Start(command => command is ["SLOWLOG", ..] ? nested : null);

        var (exitCode, output, error) = await DoctorAsync(null, hostile.EndPoint, "--json", "--timeout", "10");

        Assert.True(exitCode == 0, error + output);
        using var report = JsonDocument.Parse(output);
        var unread = report.RootElement.GetProperty("unread").EnumerateArray().Select(u => u.GetString()!).ToList();
        Assert.Contains(unread, u => u.StartsWith("SLOWLOG GET: the connection failed", StringComparison.Ordinal));
        Assert.Single(Findings(output, "role")); // INFO, read before, stands
    }
}
