using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text;

namespace MuxWatch.Testing;

/// <summary>
/// A hostile or broken Redis, which no real <c>redis-server</c> can be made into: a loopback listener that
/// speaks just enough RESP2 for StackExchange.Redis to connect (PING, ECHO, CLIENT, CONFIG GET, INFO,
/// SUBSCRIBE…) and answers the commands a test names with whatever it is given (a 10 MB INFO, a million
/// fields, megabytes of error). Only for hostile input: every behaviour of a real server is tested
/// against <see cref="RedisServer"/>.
/// </summary>
public sealed class HostileRedis : IAsyncDisposable
{
    /// <summary>A small, plausible INFO for any section: what a Redis 7 that is doing nothing answers.</summary>
    public const string QuietInfo =
        "# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\nrun_id:0123456789abcdef0123456789abcdef01234567\r\nuptime_in_seconds:1000\r\n" +
        "# Replication\r\nrole:master\r\nconnected_slaves:0\r\n" +
        "# Persistence\r\nloading:0\r\nrdb_bgsave_in_progress:0\r\nrdb_saves:0\r\nrdb_last_save_time:1700000000\r\nrdb_last_bgsave_status:ok\r\nrdb_current_bgsave_time_sec:-1\r\naof_rewrite_in_progress:0\r\naof_rewrites:0\r\n" +
        "# Stats\r\ntotal_forks:0\r\nlatest_fork_usec:0\r\n";

    private readonly TcpListener _listener = new(IPAddress.Loopback, 0);
    private readonly CancellationTokenSource _stopping = new();
    private readonly List<TcpClient> _clients = [];
    private readonly Lock _lock = new();
    private readonly Func<IReadOnlyList<string>, byte[]?> _answer;
    private readonly Func<IReadOnlyList<string>, TimeSpan>? _delay;
    private readonly Task _accepting;
    private int _commands;

    private HostileRedis(Func<IReadOnlyList<string>, byte[]?> answer, Func<IReadOnlyList<string>, TimeSpan>? delay = null)
    {
        _answer = answer;
        _delay = delay;
        _listener.Start();
        _accepting = AcceptAsync();
    }

    /// <summary><c>127.0.0.1:port</c>.</summary>
    public string EndPoint => $"127.0.0.1:{((IPEndPoint)_listener.LocalEndpoint).Port}";

    /// <summary>Commands answered so far (handshakes included).</summary>
    public int Commands => Volatile.Read(ref _commands);

    /// <summary>
    /// Starts listening. <paramref name="answer"/> sees each command (name upper-cased, then its arguments)
    /// and returns the raw reply to send, or null for the quiet server's own answer.
    /// </summary>
    public static HostileRedis Start(Func<IReadOnlyList<string>, byte[]?> answer) => new(answer);

    /// <summary>As <see cref="Start(Func{IReadOnlyList{string}, byte[]?})"/>, each reply sent after <paramref name="delay"/> of its command (a slow server: the connection's next commands wait behind it).</summary>
    public static HostileRedis Start(Func<IReadOnlyList<string>, byte[]?> answer, Func<IReadOnlyList<string>, TimeSpan> delay) => new(answer, delay);

    /// <summary>A bulk string reply.</summary>
    public static byte[] Bulk(string text)
    {
        var body = Encoding.UTF8.GetBytes(text);
        return [.. Encoding.ASCII.GetBytes($"${body.Length}\r\n"), .. body, .. "\r\n"u8];
    }

    /// <summary>An error reply (<c>-</c> then the text, which must hold no line break).</summary>
    public static byte[] Error(string text) => Encoding.UTF8.GetBytes($"-{text}\r\n");

    /// <summary>An INFO bulk string of about <paramref name="bytes"/>: the quiet fields, then one long value.</summary>
    public static byte[] HugeInfo(int bytes) => Bulk(QuietInfo + "padding:" + new string('x', bytes) + "\r\n");

    /// <summary>An INFO bulk string with <paramref name="fields"/> made-up fields after the quiet ones.</summary>
    public static byte[] ManyFieldsInfo(int fields)
    {
        var text = new StringBuilder(QuietInfo, QuietInfo.Length + (fields * 16));
        for (var i = 0; i < fields; i++)
        {
            text.Append(CultureInfo.InvariantCulture, $"f{i}:{i}\r\n");
        }

        return Bulk(text.ToString());
    }

    /// <inheritdoc />
    public async ValueTask DisposeAsync()
    {
        await _stopping.CancelAsync().ConfigureAwait(false);
        _listener.Stop();
        lock (_lock)
        {
            foreach (var client in _clients)
            {
                client.Dispose();
            }
        }

        try
        {
            await _accepting.ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is OperationCanceledException or SocketException or ObjectDisposedException)
        {
        }

        _stopping.Dispose();
    }

    private async Task AcceptAsync()
    {
        while (!_stopping.IsCancellationRequested)
        {
            var client = await _listener.AcceptTcpClientAsync(_stopping.Token).ConfigureAwait(false);
            lock (_lock)
            {
                _clients.Add(client);
            }

            _ = Task.Run(() => ServeAsync(client));
        }
    }

    private async Task ServeAsync(TcpClient client)
    {
        try
        {
            var stream = client.GetStream();
            var reader = new BufferedStream(stream, 64 * 1024);
            while (!_stopping.IsCancellationRequested && await ReadCommandAsync(reader).ConfigureAwait(false) is { } command)
            {
                Interlocked.Increment(ref _commands);
                var reply = _answer(command) ?? Quiet(command);
                if (_delay?.Invoke(command) is { } wait && wait > TimeSpan.Zero)
                {
                    await Task.Delay(wait, _stopping.Token).ConfigureAwait(false); // the slowness being induced, not a wait for a condition
                }

                await stream.WriteAsync(reply, _stopping.Token).ConfigureAwait(false);
            }
        }
        catch (Exception ex) when (ex is IOException or SocketException or ObjectDisposedException or OperationCanceledException)
        {
        }
        finally
        {
            client.Dispose();
        }
    }

    /// <summary>What a quiet Redis 7 answers: enough for the client's handshake and MuxWatch's poll.</summary>
    private static byte[] Quiet(IReadOnlyList<string> command) => command switch
    {
        ["PING", ..] => "+PONG\r\n"u8.ToArray(),
        ["ECHO", var text] => [.. Encoding.ASCII.GetBytes($"${text.Length}\r\n"), .. Encoding.Latin1.GetBytes(text), .. "\r\n"u8], // byte for byte: the client checks it
        ["CLIENT", "ID"] => ":1\r\n"u8.ToArray(),
        ["CLIENT", ..] or ["SELECT", ..] or ["AUTH", ..] => "+OK\r\n"u8.ToArray(),
        ["INFO", ..] => Bulk(QuietInfo),
        ["CONFIG", _, "databases"] => Encoding.ASCII.GetBytes("*2\r\n$9\r\ndatabases\r\n$2\r\n16\r\n"),
        ["CONFIG", _, "latency-monitor-threshold"] => Encoding.ASCII.GetBytes("*2\r\n$25\r\nlatency-monitor-threshold\r\n$1\r\n0\r\n"),
        ["CONFIG", ..] or ["LATENCY", ..] or ["SLOWLOG", ..] => "*0\r\n"u8.ToArray(),
        ["TIME"] => Encoding.ASCII.GetBytes($"*2\r\n$10\r\n{DateTimeOffset.UtcNow.ToUnixTimeSeconds()}\r\n$1\r\n0\r\n"),
        ["GET", ..] => "$-1\r\n"u8.ToArray(),
        ["SUBSCRIBE", var channel] => [.. Encoding.ASCII.GetBytes($"*3\r\n$9\r\nsubscribe\r\n"), .. Bulk(channel), .. ":1\r\n"u8],
        ["CLUSTER", ..] => Error("ERR This instance has cluster support disabled"),
        _ => Error($"ERR unknown command '{command[0]}'"),
    };

    /// <summary>Reads one RESP2 command (an array of bulk strings, as the client sends); null at the end of the stream.</summary>
    private static async Task<IReadOnlyList<string>?> ReadCommandAsync(Stream reader)
    {
        if (await ReadLineAsync(reader).ConfigureAwait(false) is not { } header)
        {
            return null;
        }

        if (!header.StartsWith('*'))
        {
            return [.. header.Split(' ', StringSplitOptions.RemoveEmptyEntries).Select((part, i) => i == 0 ? part.ToUpperInvariant() : part)]; // an inline command
        }

        var count = int.Parse(header.AsSpan(1), CultureInfo.InvariantCulture);
        var parts = new List<string>(count);
        for (var i = 0; i < count; i++)
        {
            var length = int.Parse((await ReadLineAsync(reader).ConfigureAwait(false))!.AsSpan(1), CultureInfo.InvariantCulture);
            var body = new byte[length + 2];
            await reader.ReadExactlyAsync(body).ConfigureAwait(false);
            var text = Encoding.Latin1.GetString(body, 0, length); // one char a byte: an argument goes back as it came
            parts.Add(i == 0 ? text.ToUpperInvariant() : text);
        }

        return parts;
    }

    private static async Task<string?> ReadLineAsync(Stream reader)
    {
        var line = new StringBuilder();
        var one = new byte[1];
        while (await reader.ReadAsync(one).ConfigureAwait(false) == 1)
        {
            if (one[0] == '\n')
            {
                return line.ToString().TrimEnd('\r');
            }

            line.Append((char)one[0]);
        }

        return null;
    }
}
