using System.Diagnostics;
using System.Globalization;

namespace MuxWatch.Testing;

/// <summary>
/// A real <c>redis-server</c> that speaks TLS only, on a free loopback port, with a certificate signed by
/// a test CA that <c>openssl</c> makes here (the server's names: <c>localhost</c> and <c>127.0.0.1</c>).
/// Control commands go through <c>redis-cli --tls</c>.
/// </summary>
public sealed class TlsRedisServer : IAsyncDisposable
{
    private readonly string _directory;
    private ExternalProcess? _process;

    private TlsRedisServer(string directory, int port)
    {
        _directory = directory;
        Port = port;
    }

    /// <summary>The TLS port.</summary>
    public int Port { get; }

    /// <summary><c>127.0.0.1:port</c>.</summary>
    public string EndPoint => $"127.0.0.1:{Port}";

    /// <summary>The test CA's certificate (PEM): what a client must trust.</summary>
    public string CaFile => Path.Combine(_directory, "ca.pem");

    /// <summary>Another CA's certificate (PEM), which did not sign the server's: trusting it must not help.</summary>
    public string OtherCaFile => Path.Combine(_directory, "other-ca.pem");

    /// <summary>With <see cref="StartWithIntermediateAsync"/>: the intermediate CA that signed the server's certificate (PEM).</summary>
    public string IntermediateFile => Path.Combine(_directory, "intermediate.pem");

    /// <summary>With <see cref="StartWithIntermediateAsync"/>: the root and the intermediate in one PEM file.</summary>
    public string BundleFile => Path.Combine(_directory, "bundle.pem");

    /// <summary>True when control commands skip certificate checks (the chain was made broken on purpose).</summary>
    private bool _insecureControl;

    /// <summary>
    /// A TLS-only server whose certificate was issued by an intermediate CA under a root, as Azure, AWS and most
    /// company CAs issue: it presents its certificate and the intermediate (a chain file); <see cref="CaFile"/> is
    /// the root. Made with .NET's <see cref="System.Security.Cryptography.X509Certificates.CertificateRequest"/>
    /// (openssl 3.0 cannot date a certificate in the past): <paramref name="expiredIntermediate"/> makes the
    /// intermediate one that expired yesterday.
    /// </summary>
    public static async Task<TlsRedisServer> StartWithIntermediateAsync(bool expiredIntermediate = false, params string[] extraArguments)
    {
        var directory = Directory.CreateTempSubdirectory("muxwatch-tls-chain-").FullName;
        var server = new TlsRedisServer(directory, FreePort.Next()) { _insecureControl = expiredIntermediate };
        string File(string name) => Path.Combine(directory, name);
        TestCertificates.WriteChain(directory, expiredIntermediate);
        try
        {
            await server.StartProcessAsync(File, extraArguments, certificateFile: "chain.pem").ConfigureAwait(false);
        }
        catch
        {
            await server.DisposeAsync().ConfigureAwait(false);
            throw;
        }

        return server;
    }

    /// <summary>Makes the CAs and the server's certificate, starts the server and waits until it answers PING over TLS.</summary>
    /// <param name="extraArguments">More <c>redis-server</c> arguments (a password, ...).</param>
    public static async Task<TlsRedisServer> StartAsync(params string[] extraArguments)
    {
        var directory = Directory.CreateTempSubdirectory("muxwatch-tls-ca-").FullName;
        var server = new TlsRedisServer(directory, FreePort.Next());
        string File(string name) => Path.Combine(directory, name);
        await System.IO.File.WriteAllTextAsync(File("server.ext"), "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n").ConfigureAwait(false);
        await OpensslAsync("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", File("ca.key"), "-out", File("ca.pem"), "-days", "2", "-subj", "/CN=MuxWatch Test CA").ConfigureAwait(false);
        await OpensslAsync("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", File("other-ca.key"), "-out", File("other-ca.pem"), "-days", "2", "-subj", "/CN=Some Other CA").ConfigureAwait(false);
        await OpensslAsync("req", "-newkey", "rsa:2048", "-nodes", "-keyout", File("server.key"), "-out", File("server.csr"), "-subj", "/CN=localhost").ConfigureAwait(false);
        await OpensslAsync("x509", "-req", "-in", File("server.csr"), "-CA", File("ca.pem"), "-CAkey", File("ca.key"), "-CAcreateserial",
            "-out", File("server.pem"), "-days", "2", "-extfile", File("server.ext")).ConfigureAwait(false);

        try
        {
            await server.StartProcessAsync(File, extraArguments).ConfigureAwait(false);
        }
        catch
        {
            await server.DisposeAsync().ConfigureAwait(false);
            throw;
        }

        return server;
    }

    /// <summary>The password <see cref="CommandAsync"/> authenticates with (set it when the server was started with one).</summary>
    public string? Password { get; set; }

    private async Task StartProcessAsync(Func<string, string> file, string[] extraArguments, string certificateFile = "server.pem")
    {
        _process = ExternalProcess.Start("redis-server", [
            "--port", "0", "--tls-port", Port.ToString(CultureInfo.InvariantCulture),
            "--tls-cert-file", file(certificateFile), "--tls-key-file", file("server.key"), "--tls-ca-cert-file", file("ca.pem"),
            "--tls-auth-clients", "no", "--bind", "127.0.0.1", "--save", string.Empty, "--appendonly", "no", "--dir", _directory,
            "--enable-debug-command", "yes", "--protected-mode", "no", .. extraArguments]);
        var password = extraArguments.SkipWhile(a => a != "--requirepass").Skip(1).FirstOrDefault();
        await Eventually.UntilAsync(async () => (await CommandAsync(password is null ? ["PING"] : ["-a", password, "--no-auth-warning", "PING"]).ConfigureAwait(false)) == "PONG",
            $"the TLS-only redis-server on port {Port} to answer PING").ConfigureAwait(false);
    }

    /// <summary>Runs one command through <c>redis-cli --tls</c>, trusting the test CA.</summary>
    public async Task<string> CommandAsync(params string[] arguments)
    {
        var info = new ProcessStartInfo("redis-cli") { RedirectStandardOutput = true, RedirectStandardError = true, RedirectStandardInput = true };
        string[] auth = Password is null ? [] : ["-a", Password, "--no-auth-warning"];
        string[] trust = _insecureControl ? ["--insecure"] : ["--cacert", CaFile];
        foreach (var argument in (string[])["--tls", .. trust, "-h", "127.0.0.1", "-p", Port.ToString(CultureInfo.InvariantCulture), .. auth, .. arguments])
        {
            info.ArgumentList.Add(argument);
        }

        var (_, output, _) = await BuiltProgram.RunAsync(info).ConfigureAwait(false);
        return output.Trim();
    }

    /// <inheritdoc />
    public async ValueTask DisposeAsync()
    {
        if (_process is not null)
        {
            await _process.DisposeAsync().ConfigureAwait(false);
        }

        try
        {
            Directory.Delete(_directory, recursive: true);
        }
        catch (IOException)
        {
        }
    }

    private static async Task OpensslAsync(params string[] arguments)
    {
        var info = new ProcessStartInfo("openssl") { RedirectStandardOutput = true, RedirectStandardError = true, RedirectStandardInput = true };
        foreach (var argument in arguments)
        {
            info.ArgumentList.Add(argument);
        }

        var (exitCode, _, error) = await BuiltProgram.RunAsync(info).ConfigureAwait(false);
        if (exitCode != 0)
        {
            throw new InvalidOperationException($"openssl {arguments[0]} failed: {error}");
        }
    }
}
