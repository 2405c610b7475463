import cc.mallet.topics.MarginalProbEstimator;
import cc.mallet.types.Alphabet;
import cc.mallet.types.FeatureSequence;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.FileInputStream;
import java.util.Arrays;

/**
 * Times MALLET's left-to-right evaluator (MarginalProbEstimator, the code behind
 * `mallet evaluate-topics`) on a workload written by benchmarks/mallet_speed.py.
 *
 * Usage: java LtrBench WORKLOAD PARTICLES RESAMPLE(true|false) SEED
 * Workload (big-endian): T, V (int); alpha[T], beta (double); for each word type: the number of
 * topics with a count, then (topic, count) pairs (int); the number of documents; for each
 * document its length and its word ids (int).
 * Prints one line for the best of three timed runs: site updates per second, seconds, total
 * log-likelihood.
 */
public class LtrBench extends MarginalProbEstimator {

    LtrBench(int topics, double[] alpha, double beta, int[][] typeTopicCounts, int[] tokensPerTopic) {
        super(topics, alpha, Arrays.stream(alpha).sum(), beta, typeTopicCounts, tokensPerTopic);
    }

    /** MALLET's packed counts: (count << bits) | topic, largest count first. */
    static int topicBits(int topics) {
        int mask = Integer.bitCount(topics) == 1 ? topics - 1 : Integer.highestOneBit(topics) * 2 - 1;
        return Integer.bitCount(mask);
    }

    double time(FeatureSequence[] docs, int particles, boolean resample, double[] out) {
        long sites = 0;
        double total = 0;
        long t0 = System.nanoTime();
        for (FeatureSequence doc : docs) {
            double[] sum = new double[doc.getLength()];
            for (int p = 0; p < particles; p++) {
                double[] probs = leftToRight(doc, resample);
                for (int n = 0; n < probs.length; n++) sum[n] += probs[n];
            }
            for (double s : sum) total += Math.log(s / particles);
            long n = doc.getLength();
            sites += resample ? particles * n * (n - 1) / 2 : particles * n;
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        out[0] = sites / seconds;
        out[1] = seconds;
        out[2] = total;
        return total;
    }

    public static void main(String[] args) throws Exception {
        DataInputStream in = new DataInputStream(new BufferedInputStream(new FileInputStream(args[0])));
        int particles = Integer.parseInt(args[1]);
        boolean resample = Boolean.parseBoolean(args[2]);
        int topics = in.readInt();
        int types = in.readInt();
        double[] alpha = new double[topics];
        for (int t = 0; t < topics; t++) alpha[t] = in.readDouble();
        double beta = in.readDouble();
        int bits = topicBits(topics);
        int[][] typeTopicCounts = new int[types][];
        int[] tokensPerTopic = new int[topics];
        for (int w = 0; w < types; w++) {
            int k = in.readInt();
            long[] pairs = new long[k];
            for (int j = 0; j < k; j++) {
                int topic = in.readInt();
                int count = in.readInt();
                tokensPerTopic[topic] += count;
                pairs[j] = ((long) count << 32) | topic;
            }
            Arrays.sort(pairs);
            typeTopicCounts[w] = new int[k];
            for (int j = 0; j < k; j++) {
                long p = pairs[k - 1 - j];
                typeTopicCounts[w][j] = ((int) (p >>> 32) << bits) | (int) (p & 0xffffffffL);
            }
        }
        Alphabet alphabet = new Alphabet();
        for (int w = 0; w < types; w++) alphabet.lookupIndex("w" + w);
        FeatureSequence[] docs = new FeatureSequence[in.readInt()];
        for (int d = 0; d < docs.length; d++) {
            int[] words = new int[in.readInt()];
            for (int n = 0; n < words.length; n++) words[n] = in.readInt();
            docs[d] = new FeatureSequence(alphabet, words);
        }
        LtrBench bench = new LtrBench(topics, alpha, beta, typeTopicCounts, tokensPerTopic);
        bench.setRandomSeed(Integer.parseInt(args[3]));
        double[] out = new double[3];
        bench.time(Arrays.copyOf(docs, Math.min(docs.length, 20)), particles, resample, out);  // JIT warm-up
        double[] best = new double[3];
        for (int rep = 0; rep < 3; rep++) {  // the best of three timed runs
            bench.time(docs, particles, resample, out);
            if (out[0] > best[0]) best = out.clone();
        }
        System.out.printf("%.6e %.4f %.6f%n", best[0], best[1], best[2]);
    }
}
