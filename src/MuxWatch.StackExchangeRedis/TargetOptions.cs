using System.Security.Cryptography.X509Certificates;

namespace MuxWatch.StackExchangeRedis;

/// <summary>One Redis endpoint (or set of endpoints) for the sidecar to watch, bound from <c>MuxWatch:Targets</c>.</summary>
public sealed class TargetOptions
{
    /// <summary>The name: the <c>multiplexer</c> label and the name in <c>/api/targets</c>.</summary>
    public string Name { get; set; } = string.Empty;

    /// <summary>A StackExchange.Redis configuration string, such as <c>redis:6379,password=...,ssl=true</c>. The password is never shown.</summary>
    public string ConnectionString { get; set; } = string.Empty;

    /// <summary>
    /// A file whose content (one trailing line break dropped) is the password, used instead of one in
    /// <see cref="ConnectionString"/>: the recommended form (a Kubernetes Secret or a Docker secret mounted
    /// as a file). A password on the command line is readable by any local user in <c>/proc/PID/cmdline</c>,
    /// and one with a comma cannot be written in a configuration string at all.
    /// </summary>
    public string? PasswordFile { get; set; }

    /// <summary>
    /// For a TLS target (<c>ssl=true</c>): a PEM or DER file holding the CA certificate that signed the
    /// server's certificate, trusted besides the system's roots (a private CA, a test CA). A certificate
    /// that does not chain to it or to a system root is refused, and <c>/api/targets</c> says why.
    /// </summary>
    public string? TrustedCaFile { get; set; }

    /// <summary>
    /// The certificates of <see cref="TrustedCaFile"/> (every one of a PEM bundle: a root, an intermediate, or both;
    /// one DER certificate), or null when none is set.
    /// </summary>
    /// <exception cref="System.Security.Cryptography.CryptographicException">The file holds no certificate.</exception>
    internal X509Certificate2Collection? ReadTrustedCa()
    {
        if (string.IsNullOrWhiteSpace(TrustedCaFile))
        {
            return null;
        }

        var bytes = ReadBounded(TrustedCaFile, MaxTrustedCaFileBytes, "a CA file");
        var certificates = new X509Certificate2Collection();
        try
        {
            certificates.ImportFromPem(System.Text.Encoding.UTF8.GetString(bytes));
        }
        catch (System.Security.Cryptography.CryptographicException)
        {
            // Not PEM: one DER certificate, or nothing readable (which throws from the loader below).
        }

        if (certificates.Count == 0)
        {
            certificates.Add(X509CertificateLoader.LoadCertificate(bytes));
        }

        return certificates;
    }

    /// <summary>The longest <see cref="TrustedCaFile"/> read: 1 MiB, a bundle of every public root (about 200 KB) five times over.</summary>
    internal const int MaxTrustedCaFileBytes = 1024 * 1024;

    /// <summary>
    /// The longest <see cref="PasswordFile"/> taken: 4 KiB, far beyond any password a Redis ACL or <c>requirepass</c>
    /// is given in practice; a larger file is a wrong path (a log, a binary), refused before it is read.
    /// </summary>
    internal const int MaxPasswordFileBytes = 4096;

    /// <summary>The password from <see cref="PasswordFile"/> (trailing line breaks dropped), or null when none is set.</summary>
    /// <exception cref="IOException">The file cannot be read, or is larger than <see cref="MaxPasswordFileBytes"/>.</exception>
    internal string? ReadPassword() => string.IsNullOrWhiteSpace(PasswordFile)
        ? null
        : System.Text.Encoding.UTF8.GetString(ReadBounded(PasswordFile, MaxPasswordFileBytes, "a password file")).TrimEnd('\r', '\n');

    /// <summary>
    /// The bytes of <paramref name="path"/>, reading at most one byte past <paramref name="maxBytes"/> whatever the file
    /// is: a device (<c>/dev/zero</c>, <c>/dev/urandom</c>) reports a length of 0 and never ends, so its length is not asked.
    /// </summary>
    /// <exception cref="IOException">The file cannot be read, or holds more than <paramref name="maxBytes"/>.</exception>
    internal static byte[] ReadBounded(string path, int maxBytes, string what)
    {
        using var stream = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite, bufferSize: 1);
        var buffer = new byte[maxBytes + 1];
        var total = 0;
        int read;
        while (total < buffer.Length && (read = stream.Read(buffer, total, buffer.Length - total)) > 0)
        {
            total += read;
        }

        return total <= maxBytes
            ? buffer[..total]
            : throw new IOException(string.Create(System.Globalization.CultureInfo.InvariantCulture, $"it holds more than {maxBytes} bytes, and {what} is at most {maxBytes}: is it the right file?"));
    }
}
